"""benchmarks/app_bench.py on a small synthetic store: the JSON it writes has the agreed shape."""
from __future__ import annotations

import json
from pathlib import Path

from bench_scripts import load_bench

ROOT = Path(__file__).resolve().parents[2]


def test_app_bench_writes_latency_json(tmp_path):
    bench = load_bench("app_bench")
    out = tmp_path / "app.json"
    assert bench.main(["--candidates", "300", "--changes", "12", "--no-browser", "--no-search-start",
                       "--no-compare", "--no-stop", "--no-heldout", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["benchmark"] == "app" and data["gpu"] == "cpu" and data["date"] and data["commit"]
    m = data["metrics"]
    assert m["candidates"] == 300 and m["threshold_changes"] == 12
    assert 0 < m["threshold_update_ms_p50"] <= m["threshold_update_ms_p95"]
    lo, hi = m["coverage_range"]
    assert lo < hi  # the threshold really moved coverage
    assert "Synthetic" in m["notes"]


def test_app_bench_times_the_compare_view_and_a_stop_mid_step():
    """The two timings on the real shipped data, cut short: a Compare with the roofline forecaster,
    and Stop during a step whose forecaster takes 5 s."""
    import pytest

    from workbench.dataset import DEFAULT_SHIPPED_DIR

    if not (DEFAULT_SHIPPED_DIR / "kernels.parquet").exists():
        pytest.skip("no shipped data")
    bench = load_bench("app_bench")
    got = bench.compare_view_s("L1/12_layer_norm", budget=8, forecaster="roofline")
    if "compare_view_skipped" not in got:
        assert 0 < got["compare_view_s"] and got["compare_view_curves"] == 4 and got["compare_view_global_best"] > 0
    stop = bench.stop_latency(trials=2, slow_step_s=5.0)
    assert stop["stop_latency_samples"] == 2 and 0 <= stop["stop_latency_s_p95"] < 5.0
    assert 0 <= stop.get("stop_latency_s_fitting", 0) < 10.0
