"""Honest kernels from the zoo are measured ok and never flagged (CPU, Triton interpreter)."""
from __future__ import annotations

import pytest

from exec_fixtures import CPU_OPTIONS
from workbench.execution import guards
from workbench.execution.executors import CPUExecutor
from workbench.problems import get_problem
from workbench.records import Candidate
from workbench.zoo import problem_id_of, zoo_files

FILES = zoo_files()


def _pick(n: int) -> list:
    """n Triton zoo files, spread over as many problems as possible."""
    by_problem: dict[str, list] = {}
    for f in FILES:
        if not f.name.startswith("cuda_"):
            by_problem.setdefault(problem_id_of(f), []).append(f)
    picked, round_ = [], 0
    while len(picked) < n and any(len(v) > round_ for v in by_problem.values()):
        picked += [v[round_] for v in by_problem.values() if len(v) > round_]
        round_ += 1
    return picked[:n]


def test_static_guards_pass_every_zoo_candidate():
    flagged = {}
    for f in FILES:
        found = guards.static_findings(f.read_text(), get_problem(problem_id_of(f)).source)
        if found:
            flagged[str(f)] = found
    assert len(FILES) >= 20
    assert not flagged, flagged


def _measure(files):
    jobs = [(get_problem(problem_id_of(f)), f) for f in files]
    with CPUExecutor(workers=2, timeout_s=240, options=CPU_OPTIONS) as ex:
        futures = [ex.submit(p, [Candidate.from_source(p.id, f.read_text())])[0] for p, f in jobs]
        return {str(f): fut.result() for (_, f), fut in zip(jobs, futures)}


def test_a_few_zoo_candidates_are_ok():
    results = _measure(_pick(4))
    bad = {k: (m.status.value, m.reason) for k, m in results.items() if not m.ok}
    assert not bad, bad


@pytest.mark.slow
def test_twenty_four_zoo_candidates_over_many_problems_are_ok():
    files = _pick(24)
    assert len({problem_id_of(f) for f in files}) >= 20
    results = _measure(files)
    bad = {k: (m.status.value, m.reason) for k, m in results.items() if not m.ok}
    assert not bad, bad
