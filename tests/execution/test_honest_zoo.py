"""Honest kernels from the zoo are measured ok and never flagged (CPU, Triton interpreter)."""
from __future__ import annotations

import pytest

from exec_fixtures import CPU_OPTIONS
from workbench.execution import guards
from workbench.execution.executors import CPUExecutor
from workbench.problems import get_problem
from workbench.zoo import zoo_kernels

KERNELS = zoo_kernels()


def _pick(n: int) -> list:
    """n Triton zoo variants, spread over as many problems as possible."""
    by_problem: dict[str, list] = {}
    for k in KERNELS:
        if k.backend != "cuda":
            by_problem.setdefault(k.problem_id, []).append(k)
    picked, round_ = [], 0
    while len(picked) < n and any(len(v) > round_ for v in by_problem.values()):
        picked += [v[round_] for v in by_problem.values() if len(v) > round_]
        round_ += 1
    return picked[:n]


def test_static_guards_pass_every_zoo_candidate():
    flagged = {}
    for k in KERNELS:
        found = guards.static_findings(k.source, get_problem(k.problem_id).source)
        if found:
            flagged[k.name] = found
    assert len(KERNELS) >= 20
    assert not flagged, flagged


def _measure(kernels):
    with CPUExecutor(workers=2, timeout_s=240, options=CPU_OPTIONS) as ex:
        futures = [ex.submit(get_problem(k.problem_id), [k.candidate()])[0] for k in kernels]
        return {k.name: fut.result() for k, fut in zip(kernels, futures)}


def test_a_few_zoo_candidates_are_ok():
    results = _measure(_pick(4))
    bad = {k: (m.status.value, m.reason) for k, m in results.items() if not m.ok}
    assert not bad, bad


@pytest.mark.slow
def test_twenty_four_zoo_candidates_over_many_problems_are_ok():
    kernels = _pick(24)
    assert len({k.problem_id for k in kernels}) >= 20
    results = _measure(kernels)
    bad = {k: (m.status.value, m.reason) for k, m in results.items() if not m.ok}
    assert not bad, bad
