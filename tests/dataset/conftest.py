"""Fixtures: a small store with measured candidates on two GPUs.

Rows in the study datasets' schemas are built by study_fixtures.py beside this file.
"""
from __future__ import annotations

import json

import pytest

from workbench.records import Candidate, Hardware, Measurement, Problem, Status
from workbench.store import Store

def _hw(key: str) -> Hardware:
    return Hardware(key=key, name=f"NVIDIA {key.upper()}", compute_capability="9.0", sm_count=132,
                    memory_mib=81559, driver="580.1", cuda_version="12.8", torch_version="2.9.0",
                    triton_version="3.5.0")


def _measured(c: Candidate, hw: Hardware, speedup: float | None, status=Status.OK) -> Measurement:
    ok = status is Status.OK
    return Measurement(
        candidate_id=c.id, problem_id=c.problem_id, hardware_key=hw.key, status=status,
        hardware_fingerprint=hw.fingerprint, reference_ms=2.0, reference_ci_low_ms=1.9,
        reference_ci_high_ms=2.1, reference_runs=30,
        candidate_ms=2.0 / speedup if ok else None, candidate_ci_low_ms=None,
        candidate_ci_high_ms=None, candidate_runs=30 if ok else 0,
        speedup=speedup if ok else None, compile_s=1.25, reason="" if ok else "wrong output",
        log="timing log", hardware_json=json.dumps(hw.to_dict(), sort_keys=True),
        measured_at="2026-11-01T10:00:00Z")


@pytest.fixture
def records():
    """(problems, candidates, measurements): 2 problems, 4 candidates (one a child), 2 GPUs."""
    p1 = Problem(id="L1/01_softmax", level=1, name="01_softmax", source="# softmax ref\n",
                 tags=("reduction", "row"), flops=1e6, bytes_moved=8e6, category="reduction")
    p2 = Problem(id="L2/05_gemm_relu", level=2, name="05_gemm_relu", source="# gemm ref\n", dtype="bf16")
    unused = Problem(id="L1/99_unused", level=1, name="99_unused", source="# never measured\n")
    c1 = Candidate.from_source(p1.id, "a = 1\n", origin="zoo:one_pass", created_at="2026-11-01T09:00:00Z")
    c2 = Candidate.from_source(p1.id, "a = 2\n", parent_id=c1.id, generation=1,
                               origin="mutation:block", created_at="2026-11-01T09:01:00Z")
    c3 = Candidate.from_source(p2.id, "b = 1\n", origin="llm:m:p1", created_at="2026-11-01T09:02:00Z")
    c4 = Candidate.from_source(p2.id, "b = 2\n", origin="llm:m:p2", created_at="2026-11-01T09:03:00Z")
    h100, h200 = _hw("h100"), _hw("h200")
    ms = [_measured(c1, h100, 1.0), _measured(c1, h200, 1.2), _measured(c2, h100, 4.0),
          _measured(c3, h100, 0.3), _measured(c4, h100, None, Status.INCORRECT)]
    return [p1, p2, unused], [c1, c2, c3, c4], ms


@pytest.fixture
def store(tmp_path, records):
    problems, candidates, measurements = records
    with Store(tmp_path / "db.sqlite") as s:
        s.put_problems(problems)
        s.put_candidates(candidates)
        s.put_measurements(measurements)
        yield s
