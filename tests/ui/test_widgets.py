"""The ipywidgets calibration front-end (widgets/calibration.py), driven by setting the slider.

Records are test fixtures written here: four forecasts with known confidences and measured
speedups, so coverage and risk at each threshold can be worked out by hand.
"""
from __future__ import annotations

import math

import pytest

pytest.importorskip("ipywidgets")

from workbench import bins  # noqa: E402
from workbench.records import Forecast, Measurement, ParseStatus, Status  # noqa: E402
from workbench.store import Store  # noqa: E402
from widgets import CalibrationWidget  # noqa: E402


def _forecast(cid: str, top: int, conf: float, abstained: bool = False) -> Forecast:
    rest = (1.0 - conf) / (bins.N_BINS - 1)
    probs = [conf if b == top else rest for b in range(bins.N_BINS)]
    return Forecast(forecaster="fixture", candidate_id=cid, problem_id="L1/01_softmax", hardware_key="h100",
                    probabilities=tuple(probs),
                    parse_status=ParseStatus.ABSTAINED if abstained else ParseStatus.OK)


def _measurement(cid: str, speedup: float) -> Measurement:
    return Measurement(candidate_id=cid, problem_id="L1/01_softmax", hardware_key="h100", status=Status.OK,
                       reference_ms=1.0, candidate_ms=1.0 / speedup, speedup=speedup)


@pytest.fixture
def records():
    b_1x = bins.bin_of(1.2)  # the bin a 1.2x speedup falls in
    fs = [_forecast("a", b_1x, 0.9), _forecast("b", b_1x, 0.7), _forecast("c", b_1x, 0.5),
          _forecast("d", b_1x, 0.95, abstained=True)]
    ms = [_measurement("a", 1.2), _measurement("b", 3.0), _measurement("c", 1.2), _measurement("d", 1.2)]
    return fs, ms


def test_slider_moves_coverage_and_risk(records):
    w = CalibrationWidget.from_records(*records, threshold=0.0)
    assert w.info.n == 4
    # Threshold 0: everything but the abstention is trusted; b is in the wrong bin.
    assert w.summary.trusted == 3 and w.summary.coverage == pytest.approx(0.75)
    assert w.summary.selective_risk == pytest.approx(1 / 3)
    assert "0.750" in w.output.value and "0.333" in w.output.value
    w.slider.value = 0.6  # a and b trusted
    assert w.summary.trusted == 2 and w.summary.selective_risk == pytest.approx(0.5)
    assert "0.500" in w.output.value
    w.slider.value = 0.8  # only a
    assert w.summary.trusted == 1 and w.summary.selective_risk == 0.0 and w.summary.deferred == 3
    w.slider.value = 0.99  # nothing trusted, the abstention (0.95) never is
    assert w.summary.trusted == 0 and math.isnan(w.summary.selective_risk)
    assert "n/a" in w.output.value


def test_from_store_and_empty(tmp_path, records):
    from workbench.problems import list_problems
    from workbench.records import Candidate

    store = Store(tmp_path / "w.sqlite")
    store.put_problems(list_problems())
    fs, ms = records
    store.put_candidates([Candidate(id=f.candidate_id, problem_id=f.problem_id, source="# fixture\n") for f in fs])
    store.put_forecasts(fs)
    store.put_measurements(ms)
    w = CalibrationWidget.from_store(store, "fixture", "h100", threshold=0.6)
    assert w.info.n == 4 and w.summary.trusted == 2
    assert "fixture on h100" in w.title.value
    empty = CalibrationWidget.from_store(store, "nobody", "h100")
    assert empty.info.n == 0 and "No forecast" in empty.output.value
    assert "application/vnd.jupyter.widget-view+json" in w._repr_mimebundle_()
