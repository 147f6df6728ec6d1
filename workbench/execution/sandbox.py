"""One candidate in a fresh, contained worker process.

`run_in_sandbox` measures one candidate through `chunked.run_chunk` (a chunk of one): a
supervisor, a contained worker (contain.py) and the judge's clean processes (timer.py).
What that protects against and what it does not is listed in contain.py; run code from a
model you do not trust inside a container or VM as well. The verdict on the judge's report
is verdict.py's.
"""
from __future__ import annotations

from workbench.execution.chunked import run_chunk
from workbench.execution.job import MeasureJob
from workbench.records import Candidate, Measurement


def run_in_sandbox(job: MeasureJob, candidate: Candidate) -> Measurement:
    """Measure one candidate in a new worker process; never raises for a bad candidate.

    `job.timeout_s` bounds compilation and correctness, `job.run_timeout_s` the timing phase
    (which starts once the per-GPU lock at `job.lock_path` is held), `job.max_wait_s` the whole
    job (see MeasureJob).
    """
    (m,) = run_chunk(job, [candidate])
    return m
