"""Records: ids, round trips, invariants."""
from __future__ import annotations

import pytest

from workbench.records import (Candidate, Forecast, Hardware, Measurement, ParseStatus, Status,
                               candidate_id)


def test_candidate_id_ignores_comments_and_spacing():
    a = "import torch\n\nclass ModelNew:  # a comment\n    pass\n"
    b = "import torch\nclass ModelNew:\n    pass   \n\n# trailing note\n"
    c = "import torch\nclass ModelNew:\n    x = 1\n"
    assert candidate_id(a) == candidate_id(b)
    assert candidate_id(a) != candidate_id(c)


def test_candidate_round_trip_and_backend():
    c = Candidate.from_source("L1/01_softmax", "import triton\nclass ModelNew: pass\n",
                              parent_id="abc", generation=2, origin="mutation:num_warps")
    assert c.backend == "triton"
    assert Candidate.from_dict(c.to_dict()) == c
    assert Candidate.from_source("p", "from torch.utils.cpp_extension import load_inline").backend == "cuda"


def test_measurement_status_and_bin():
    m = Measurement(candidate_id="c", problem_id="p", hardware_key="h100", status="ok",
                    reference_ms=2.0, candidate_ms=1.0, speedup=2.0)
    assert m.status is Status.OK and m.bin == 5
    assert Measurement.from_dict(m.to_dict()) == m
    bad = Measurement(candidate_id="c", problem_id="p", hardware_key="h100",
                      status=Status.COMPILE_ERROR)
    assert bad.bin is None and bad.status.is_failure


def test_forecast_renormalises_and_keeps_raw_sum():
    f = Forecast(forecaster="x", candidate_id="c", problem_id="p", hardware_key="h100",
                 probabilities=(0, 0, 0, 1, 3, 0, 0, 0), raw_sum=4.0)
    assert sum(f.probabilities) == pytest.approx(1.0)
    assert f.predicted_bin == 4 and f.confidence == pytest.approx(0.75)
    assert f.raw_sum == 4.0
    assert Forecast.from_dict(f.to_dict()) == f


def test_forecast_rejects_bad_distributions():
    with pytest.raises(ValueError):
        Forecast(forecaster="x", candidate_id="c", problem_id="p", hardware_key="h",
                 probabilities=(1.0,) * 7)
    with pytest.raises(ValueError):
        Forecast(forecaster="x", candidate_id="c", problem_id="p", hardware_key="h",
                 probabilities=(-1.0,) + (1.0,) * 7)


def test_abstention_is_uniform_and_flagged():
    f = Forecast.abstention("llm", "c", "p", "h100", reason="no JSON found")
    assert f.abstained and f.parse_status is ParseStatus.ABSTAINED
    assert max(f.probabilities) == pytest.approx(1 / 8)


def test_hardware_fingerprint_ignores_clocks():
    h1 = Hardware(key="h100", name="NVIDIA H100", sm_count=132, sm_clock_mhz=1980)
    h2 = h1.replace(sm_clock_mhz=345)
    h3 = h1.replace(driver="999")
    assert h1.fingerprint == h2.fingerprint != h3.fingerprint
