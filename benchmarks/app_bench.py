"""UI latency of the Calibration tab with 10,000 forecast/measurement pairs.

Fills a fresh store with N synthetic candidates, forecasts and measurements, builds the
Calibration page from the store (as the app does), then moves the confidence threshold ~50
times and times each server-side update (`CalibrationView.threshold = t`: threshold summary,
opacity column, stats text, synced to the Bokeh models of a rendered document) with
`time.perf_counter`. Synthetic records are used ONLY because
this measures UI latency, not data quality; the JSON says so in metrics.notes.

    python benchmarks/app_bench.py [--candidates 10000] [--changes 50]

writes benchmarks/results/app-cpu.json ({"benchmark", "gpu", "date", "commit", "metrics"}).
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import commit  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def synthetic_store(path: Path, n: int, seed: int = 0):
    """A store with `n` candidates of 10 problems, each with one forecast and one ok measurement.

    Speedups are log-normal; forecasts put more mass near the true bin with random sharpness,
    so confidences span (0, 1) and the threshold moves coverage.
    """
    from workbench import bins
    from workbench.problems import list_problems
    from workbench.records import Candidate, Forecast, Measurement, Status
    from workbench.store import Store

    rng = random.Random(seed)
    store = Store(path)
    problems = list_problems()[:10]
    store.put_problems(problems)
    cands, fcs, ms = [], [], []
    for i in range(n):
        p = problems[i % len(problems)]
        src = f"# synthetic (UI latency benchmark only)\nINDEX = {i}\n\n\nclass ModelNew:\n    pass\n"
        c = Candidate.from_source(p.id, src, backend="triton", origin="synthetic:app_bench")
        speedup = 2 ** rng.gauss(0.0, 1.2)
        true = bins.bin_of(speedup)
        guess = min(bins.N_BINS - 1, max(0, true + rng.choice((-1, 0, 0, 1))))
        sharp = rng.uniform(0.2, 6.0)
        probs = [2.0 ** (-sharp * abs(b - guess)) for b in range(bins.N_BINS)]
        cands.append(c)
        fcs.append(Forecast(forecaster="synthetic", candidate_id=c.id, problem_id=p.id, hardware_key="h100",
                            probabilities=tuple(probs)))
        ref = rng.uniform(0.05, 5.0)
        ms.append(Measurement(candidate_id=c.id, problem_id=p.id, hardware_key="h100", status=Status.OK,
                              reference_ms=ref, candidate_ms=ref / speedup, speedup=speedup))
    store.put_candidates(cands)
    store.put_forecasts(fcs)
    store.put_measurements(ms)
    return store


def percentile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    k = (len(s) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--candidates", type=int, default=10_000)
    ap.add_argument("--changes", type=int, default=50)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "app-cpu.json"))
    args = ap.parse_args(argv)

    from workbench.ui.calibration_page import CalibrationPage

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        store = synthetic_store(Path(tmp) / "bench.sqlite", args.candidates)
        fill_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        page = CalibrationPage(store)
        load_ms = 1000 * (time.perf_counter() - t0)
        # Render into a Bokeh document as a server session does, so every update also syncs the
        # Bokeh models (column data, Markdown text) and queues the document events a browser receives.
        from bokeh.document import Document
        import panel as pn

        pn.panel(page).get_root(Document())
        view = page.view
        n_pairs = view._info.n
        assert n_pairs == args.candidates, f"expected {args.candidates} pairs, got {n_pairs}"
        rng = random.Random(1)
        times, coverages = [], []
        for _ in range(args.changes):
            t = round(rng.uniform(0.05, 0.95), 2)
            if t == view.threshold:
                t = round(t + 0.01, 2)
            t0 = time.perf_counter()
            view.threshold = t
            times.append(1000 * (time.perf_counter() - t0))
            coverages.append(view.summary.coverage)
        store.close()
    out = {
        "benchmark": "app", "gpu": "cpu", "date": time.strftime("%Y-%m-%d"), "commit": commit(),
        "metrics": {
            "threshold_update_ms_p50": round(statistics.median(times), 3),
            "threshold_update_ms_p95": round(percentile(times, 0.95), 3),
            "threshold_changes": len(times),
            "candidates": n_pairs,
            "calibration_page_load_ms": round(load_ms, 1),
            "store_fill_s": round(fill_s, 1),
            "coverage_range": [round(min(coverages), 3), round(max(coverages), 3)],
            "notes": ("Synthetic candidates, forecasts and measurements, used only because this "
                      "benchmark measures server-side UI latency (CalibrationView threshold updates: "
                      "summary, opacity column, stats text, synced into a Bokeh document), not data quality. Timed with "
                      "time.perf_counter on a shared 2-core CPU machine, no browser round trip."),
        },
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out["metrics"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
