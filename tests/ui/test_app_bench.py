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
                       "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["benchmark"] == "app" and data["gpu"] == "cpu" and data["date"] and data["commit"]
    m = data["metrics"]
    assert m["candidates"] == 300 and m["threshold_changes"] == 12
    assert 0 < m["threshold_update_ms_p50"] <= m["threshold_update_ms_p95"]
    lo, hi = m["coverage_range"]
    assert lo < hi  # the threshold really moved coverage
    assert "Synthetic" in m["notes"]
