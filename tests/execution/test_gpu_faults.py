"""GPU fault injection: 100 candidates, 20 of them segfault, hit an illegal address, hang,
run out of GPU memory or exit. Every status must be right, no record lost, executor alive."""
from __future__ import annotations

import collections

import pytest
import torch

from exec_fixtures import fault_batch
from workbench.execution.executors import LocalGPUExecutor
from workbench.records import Status

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]


def test_fault_batch_on_gpu():
    problem, jobs = fault_batch()
    assert len({c.id for c, _ in jobs}) == 100
    with LocalGPUExecutor(gpus=[0], workers=12, timeout_s=60, run_timeout_s=60) as ex:
        futures = [ex.submit(problem, [c])[0] for c, _ in jobs]
        results = [f.result() for f in futures]
        assert [m.candidate_id for m in results] == [c.id for c, _ in jobs]
        wrong = [(c.origin, m.status.value, m.reason[:200]) for (c, exp), m in zip(jobs, results)
                 if m.status.value not in exp]
        assert not wrong, wrong
        after = ex.measure(problem, [jobs[0][0]])[0]
        assert after.status is Status.OK
    counts = collections.Counter(m.status for m in results)
    assert counts[Status.OK] == 80
