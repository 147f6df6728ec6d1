"""The typed measurement job: options are checked once, and a worker's job crosses the
channel and comes back equal."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.errors import ConfigError
from workbench.execution.hardware import cpu_hardware
from workbench.execution.job import MeasureJob, MeasureOptions, WorkerJob
from workbench.records import Candidate, Problem

PROBLEM = Problem(id="L1/x", level=1, name="x", source="# reference\n")
CAND = Candidate.from_source("L1/x", "class ModelNew: pass\n", backend="triton")


def test_unknown_option_is_refused_with_the_known_names():
    with pytest.raises(ConfigError, match="unknown measurement option.*'sedes'.*seeds"):
        MeasureOptions.from_dict({"sedes": [0]})


def test_options_round_trip_through_json():
    opts = MeasureOptions.from_dict({"seeds": [0, 1], "timing_cpus": [3], "cpu_timing": {"max_runs": 5},
                                     "time": False})
    assert opts.seeds == (0, 1) and opts.timing_cpus == (3,) and opts.worker_cpus is None
    assert MeasureOptions.from_dict(json.loads(json.dumps(opts.to_dict()))) == opts


def test_worker_job_crosses_the_channel_unchanged(tmp_path: Path):
    job = MeasureJob(PROBLEM, cpu_hardware(), device="cpu", options=MeasureOptions.from_dict({"seeds": [4]}))
    prepared = {"shapes": {"full": {"cpu": True, "sizes": None}}, "weights": {"full": str(tmp_path / "w")}}
    wj = job.for_candidate(CAND, tmp_path / CAND.id, prepared)
    assert wj.workdir == str(tmp_path / CAND.id) and wj.candidate_id == CAND.id
    back = WorkerJob.from_dict(json.loads(json.dumps(wj.to_dict())))
    assert back == wj and back.options.seeds == (4,) and back.prepared == prepared


def test_cuda_candidates_get_three_times_the_compile_budget():
    job = MeasureJob(PROBLEM, cpu_hardware(), timeout_s=10.0)
    cuda = Candidate.from_source("L1/x", "class ModelNew: pass\n", backend="cuda")
    assert job.compile_budget_s(CAND) == 10.0 and job.compile_budget_s(cuda) == 30.0
