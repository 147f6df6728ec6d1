"""Fault isolation on the CPU: every way a candidate can die costs only its own worker."""
from __future__ import annotations

import collections

from workbench.execution.executors import CPUExecutor
from workbench.records import Status
from exec_fixtures import CPU_OPTIONS, load_fixtures

FAULTS = load_fixtures("faults")
HONEST = load_fixtures("honest")[:2]


def test_fixture_set_covers_each_fault():
    names = {f.name for f in FAULTS}
    for needed in ("segfault", "hang", "sys_exit", "os_exit", "output_flood", "memory_blowup",
                   "syntax_error", "missing_modelnew"):
        assert needed in names


def test_every_fault_gets_its_status_and_the_executor_survives():
    jobs = FAULTS + HONEST
    with CPUExecutor(workers=2, timeout_s=30, cpu_mem_bytes=4 * 2**30, options=CPU_OPTIONS) as ex:
        futures = [ex.submit(f.problem, [f.candidate])[0] for f in jobs]
        results = [fut.result(timeout=300) for fut in futures]
        # Nothing lost: one record per candidate, for the right candidate.
        assert [m.candidate_id for m in results] == [f.candidate.id for f in jobs]
        wrong = {f.name: (m.status.value, m.reason) for f, m in zip(jobs, results)
                 if m.status.value not in f.expect}
        assert not wrong, wrong
        # The executor still measures after all of that.
        again = ex.measure(HONEST[0].problem, [HONEST[0].candidate])[0]
        assert again.status is Status.OK, again.reason
    by_name = {f.name: m for f, m in zip(jobs, results)}
    assert "SIGSEGV" in by_name["segfault"].reason
    assert "exit(3)" in by_name["sys_exit"].reason
    assert "code 7" in by_name["os_exit"].reason
    assert "output flood" in by_name["output_flood"].reason + by_name["output_flood"].log
    assert "30 s" in by_name["hang"].reason
    assert "ModelNew" in by_name["missing_modelnew"].reason
    counts = collections.Counter(m.status for m in results)
    assert counts[Status.OK] == len(HONEST)
