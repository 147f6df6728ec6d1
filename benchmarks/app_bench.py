"""UI latency of the Calibration tab with 10,000 forecast/measurement pairs, the same slider in
Chromium, and how long a search takes to begin.

Fills a fresh store with N synthetic candidates, forecasts and measurements, builds the
Calibration page from the store (as the app does), then moves the confidence threshold ~50
times and times each server-side update (`CalibrationView.threshold = t`: threshold summary,
opacity column, stats text, synced to the Bokeh models of a rendered document) with
`time.perf_counter`. Synthetic records are used ONLY because
this measures UI latency, not data quality; the JSON says so in metrics.notes.

Browser round trip (`slider_roundtrip_ms_p50_browser`): the Calibration page over a synthetic
store of `--browser-forecasts` (5,000) pairs is served on 127.0.0.1 and opened in Debian's
Chromium through Playwright; the slider handle gets `--browser-moves` ArrowRight presses, and each
sample is the time in the page from the key press (the keydown event's arrival) to the coverage
number changing on the page (a MutationObserver), so it covers the message to the server, the
update there and the redraw. Skipped (null, with the reason) without Chromium or Playwright.

Search start (`search_start_s_cold`, `search_start_s_warm`): over the real shipped measurements,
the app's SearchRunner starts a replay search of L1/01_softmax on H100 with the learned
forecaster, first with an empty fit cache (the forecaster is fitted) and then again with the same
settings (the fit is loaded from the cache); each is the time from `start()` until the search
exists (its id is set, the first step begins). `--no-search-start` skips it.

Compare view (`compare_view_s`): the Compare tab's comparison (`workbench.ui.compare.Comparer`)
of 4 methods (measure_all, screen_topk with the learned forecaster, screen_topk with random
scores, the forecaster-ranked order) at budget 32 on the stored H200 landscape of
--compare-problem, replayed, over the real shipped measurements: run once cold
(`compare_view_s_cold`: the landscape read and the learned forecaster fitted in a child process,
or loaded from the fit cache) and then timed again warm, as the tab runs a second comparison (the
landscape and the forecaster kept). `--no-compare` skips it.

Stop latency (`stop_latency_s_p95`, `_max`, `_samples`): the app's SearchRunner runs a replay search
whose forecaster takes `--slow-step-s` (30) seconds per batch, a deliberately slow step (a
local model on a CPU takes minutes); once the search is inside that step, Stop is pressed
(`SearchRunner.stop`) and the time until the phase is "stopped" is one sample; `--stop-trials`
(10) samples. `stop_latency_s_fitting`: the same while a learned forecaster is being fitted in its
child process (empty fit cache). `--no-stop` skips them.

Held-out forecasts (`heldout_forecasts_s_cold`, `_warm`): the Calibration tab's "Compute held-out
learned forecasts" on the shipped H100 measurements, as the page runs it (a child process, 5
problem folds, `workbench.ui.tasks.heldout_job`), with an empty fit cache and then again (the
folds loaded from the cache). `--no-heldout` skips it.

    python benchmarks/app_bench.py [--candidates 10000] [--changes 50] [--browser-forecasts 5000]

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


CHROMIUM = "/usr/bin/chromium"

#: In-page watcher: finds the coverage number through the shadow roots, records when a key press
#: arrives (window.__t0) and when the number's text changes (window.__t1).
_WATCH_JS = """() => {
  const find = (root) => { const el = root.querySelector('.wb-coverage'); if (el) return el;
    for (const n of root.querySelectorAll('*')) { if (n.shadowRoot) { const f = find(n.shadowRoot); if (f) return f; } }
    return null; };
  const el = find(document); if (!el) return null;
  const prev = el.textContent; window.__t0 = null; window.__t1 = null;
  if (!window.__keyHooked) { window.__keyHooked = true;
    document.addEventListener('keydown', () => { if (window.__t0 === null) window.__t0 = performance.now(); }, true); }
  const root = el.getRootNode();
  const obs = new MutationObserver(() => { const now = find(document);
    if (now && now.textContent !== prev && window.__t1 === null) { window.__t1 = performance.now(); obs.disconnect(); } });
  obs.observe(root, {subtree: true, childList: true, characterData: true});
  return prev; }"""


def browser_roundtrip_ms(n_forecasts: int, moves: int) -> tuple[list[float], str]:
    """Slider key press to updated coverage in Chromium (ms per sample), or ([], why not)."""
    if not Path(CHROMIUM).exists():
        return [], f"no Chromium at {CHROMIUM}"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return [], "playwright is not installed"
    import panel as pn
    from panel.tests.util import serve_component

    from workbench.ui.calibration_page import CalibrationPage

    times: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        store = synthetic_store(Path(tmp) / "browser.sqlite", n_forecasts, seed=2)
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=[
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.set_default_timeout(120_000)
                serve_component(page, lambda: CalibrationPage(store), address="127.0.0.1")
                page.locator(".wb-coverage").wait_for()
                handle = page.locator(".noUi-handle").first
                handle.focus()
                for _ in range(moves):
                    if page.evaluate(_WATCH_JS) is None:
                        break
                    handle.press("ArrowRight")
                    try:
                        page.wait_for_function("() => window.__t1 !== null", timeout=10_000)
                    except Exception:  # noqa: BLE001 - the number did not change (same 3 decimals)
                        continue
                    times.append(page.evaluate("() => window.__t1 - window.__t0"))
                browser.close()
        finally:
            pn.state.kill_all_servers()
            store.close()
    return times, ""


def search_start_s() -> dict[str, float | str]:
    """Seconds from SearchRunner.start to a begun search, with an empty fit cache then a warm one."""
    import os

    from workbench.dataset import DEFAULT_SHIPPED_DIR, load_into_store
    from workbench.problems import list_problems
    from workbench.store import Store
    from workbench.ui.runner import SearchRunner

    out: dict[str, float | str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        old = os.environ.get("WORKBENCH_CACHE_DIR")
        os.environ["WORKBENCH_CACHE_DIR"] = str(Path(tmp) / "fit-cache")
        try:
            store = Store(Path(tmp) / "shipped.sqlite")
            store.put_problems(list_problems())
            load_into_store(DEFAULT_SHIPPED_DIR, store)
            runner = SearchRunner(store)
            for name in ("search_start_s_cold", "search_start_s_warm"):
                t0 = time.perf_counter()
                runner.start("L1/01_softmax", "replay:h100", "screen_topk", "learned", budget=8)
                while runner.search_id is None and runner.phase in ("preparing", "running"):
                    time.sleep(0.02)
                if runner.search_id is None:
                    raise RuntimeError(f"the search did not start: {runner.error}")
                out[name] = round(time.perf_counter() - t0, 2)
                runner.join()
            store.close()
        finally:
            if old is None:
                os.environ.pop("WORKBENCH_CACHE_DIR", None)
            else:
                os.environ["WORKBENCH_CACHE_DIR"] = old
    return out


def _shipped_store(path: Path):
    from workbench.dataset import DEFAULT_SHIPPED_DIR, load_into_store
    from workbench.problems import list_problems
    from workbench.store import Store

    store = Store(path)
    store.put_problems(list_problems())
    load_into_store(DEFAULT_SHIPPED_DIR, store)
    return store


def _fit_cache(tmp: str):
    """Point the fit cache at an empty folder for the duration (restored after)."""
    import contextlib
    import os

    @contextlib.contextmanager
    def ctx():
        old = os.environ.get("WORKBENCH_CACHE_DIR")
        os.environ["WORKBENCH_CACHE_DIR"] = str(Path(tmp) / "fit-cache")
        try:
            yield
        finally:
            if old is None:
                os.environ.pop("WORKBENCH_CACHE_DIR", None)
            else:
                os.environ["WORKBENCH_CACHE_DIR"] = old
    return ctx()


def compare_view_s(problem: str, budget: int = 32, forecaster: str = "learned") -> dict[str, object]:
    """The Compare tab's comparison of 4 methods on a landscape, cold then warm (seconds)."""
    from workbench.store import Store
    from workbench.ui.compare import DEFAULT_METHODS, Comparer, CompareRequest, landscape_problems

    if problem not in landscape_problems().get("h200", {}):
        return {"compare_view_skipped": f"no H200 landscape of {problem} under kernels_cache/landscapes/"}
    req = CompareRequest(problem, "replay:h200", budget, DEFAULT_METHODS, forecaster=forecaster)
    out: dict[str, object] = {"compare_view_problem": problem, "compare_view_budget": budget,
                              "compare_view_methods": list(DEFAULT_METHODS), "compare_view_forecaster": forecaster}
    with tempfile.TemporaryDirectory() as tmp, _fit_cache(tmp):
        store = _shipped_store(Path(tmp) / "shipped.sqlite")
        made: dict = {}  # what a Compare tab keeps between its comparisons (CompareRunner)
        for name in ("compare_view_s_cold", "compare_view_s"):
            scratch = Store(Path(tmp) / f"{name}.sqlite")
            t0 = time.perf_counter()
            res = Comparer(store, scratch, made=made).run(req)
            out[name] = round(time.perf_counter() - t0, 2)
            scratch.close()
        out["compare_view_curves"] = len(res.curves)
        out["compare_view_global_best"] = round(res.global_best, 4) if res.global_best else None
        store.close()
    return out


def stop_latency(trials: int, slow_step_s: float) -> dict[str, object]:
    """Seconds from SearchRunner.stop() to the phase "stopped", in the middle of a slow step."""
    from workbench import compose
    from workbench.forecast.roofline import RooflineForecaster
    from workbench.ui.runner import SearchRunner

    class SlowStep(RooflineForecaster):
        """Roofline forecasts, each batch after `slow_step_s` seconds: a deliberately slow step."""

        def forecast_batch(self, *a, **kw):
            time.sleep(slow_step_s)
            return super().forecast_batch(*a, **kw)

    def wait(pred, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not pred():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True

    samples: list[float] = []
    rng = random.Random(3)
    out: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp, _fit_cache(tmp):
        store = _shipped_store(Path(tmp) / "shipped.sqlite")
        build = lambda st, spec: compose.build(spec, st, forecaster=SlowStep())  # noqa: E731
        for _ in range(trials):
            runner = SearchRunner(store, build=build)
            runner.start("L1/01_softmax", "replay:h100", "screen_topk", "roofline", budget=16)
            if not wait(lambda: runner.search_id is not None and runner.phase == "running", 120):
                raise RuntimeError(f"the search did not start: {runner.error}")
            time.sleep(rng.uniform(0.2, 1.0))  # inside step 0's forecast
            t0 = time.perf_counter()
            runner.stop()
            if not wait(lambda: runner.phase == "stopped", 120):
                raise RuntimeError(f"the search did not stop: phase {runner.phase}")
            samples.append(time.perf_counter() - t0)
        out.update(stop_latency_s_p95=round(percentile(samples, 0.95), 3), stop_latency_s_max=round(max(samples), 3),
                   stop_latency_s_median=round(statistics.median(samples), 3), stop_latency_samples=len(samples),
                   stop_latency_slow_step_s=slow_step_s)
        runner = SearchRunner(store)  # a learned forecaster to fit (empty cache): fitted in a child process
        runner.start("L1/01_softmax", "replay:h100", "screen_topk", "learned", budget=16)
        if wait(lambda: "child process" in runner.message, 120):
            time.sleep(2.0)
            t0 = time.perf_counter()
            runner.stop()
            wait(lambda: runner.phase == "stopped", 120)
            out["stop_latency_s_fitting"] = round(time.perf_counter() - t0, 3)
        store.close()
    return out


def heldout_forecasts_s(gpu: str = "h100") -> dict[str, object]:
    """Seconds of the Calibration tab's held-out computation, empty fit cache then warm."""
    from workbench.ui.jobs import ChildJob

    out: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp, _fit_cache(tmp):
        store = _shipped_store(Path(tmp) / "shipped.sqlite")
        out["heldout_measurements"] = len(store.measurements(hardware_key=gpu))
        for name in ("heldout_forecasts_s_cold", "heldout_forecasts_s_warm"):
            t0 = time.perf_counter()
            n = ChildJob("workbench.ui.tasks:heldout_job", {"db": str(store.path), "hardware_key": gpu}).run()
            out[name] = round(time.perf_counter() - t0, 1)
        out["heldout_forecasts"] = n
        store.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--candidates", type=int, default=10_000)
    ap.add_argument("--changes", type=int, default=50)
    ap.add_argument("--browser-forecasts", type=int, default=5_000)
    ap.add_argument("--browser-moves", type=int, default=30)
    ap.add_argument("--no-browser", action="store_true", help="skip the Chromium round trip")
    ap.add_argument("--no-search-start", action="store_true", help="skip the search start timings")
    ap.add_argument("--no-compare", action="store_true", help="skip the Compare view timing")
    ap.add_argument("--compare-problem", default="L1/12_layer_norm", help="the landscape problem compared")
    ap.add_argument("--compare-forecaster", default="learned", choices=("learned", "roofline"))
    ap.add_argument("--no-stop", action="store_true", help="skip the stop latency")
    ap.add_argument("--stop-trials", type=int, default=10)
    ap.add_argument("--slow-step-s", type=float, default=30.0)
    ap.add_argument("--no-heldout", action="store_true", help="skip the held-out forecasts timing")
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
    extra: dict = {}
    if not args.no_browser:
        trips, why = browser_roundtrip_ms(args.browser_forecasts, args.browser_moves)
        extra["slider_roundtrip_ms_p50_browser"] = round(statistics.median(trips), 1) if trips else None
        extra["slider_roundtrip_ms_p95_browser"] = round(percentile(trips, 0.95), 1) if trips else None
        extra["slider_roundtrip_samples"] = len(trips)
        extra["browser_forecasts"] = args.browser_forecasts
        if why:
            extra["slider_roundtrip_skipped"] = why
    if not args.no_search_start:
        extra.update(search_start_s())
    if not args.no_compare:
        extra.update(compare_view_s(args.compare_problem, forecaster=args.compare_forecaster))
    if not args.no_stop:
        extra.update(stop_latency(args.stop_trials, args.slow_step_s))
    if not args.no_heldout:
        extra.update(heldout_forecasts_s())
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
            **extra,
            "notes": ("Synthetic candidates, forecasts and measurements, used only because this "
                      "benchmark measures server-side UI latency (CalibrationView threshold updates: "
                      "summary, opacity column, stats text, synced into a Bokeh document), not data quality. Timed with "
                      "time.perf_counter on a shared 2-core CPU machine (threshold_update_ms_*: server side, no browser). "
                      "slider_roundtrip_ms_*_browser: key press on the slider to the coverage number "
                      "changing in Chromium (performance.now in the page), synthetic forecasts. "
                      "search_start_s_*: real shipped measurements, learned forecaster, replay of H100: "
                      "start() to the search existing, empty fit cache (cold) then the same settings "
                      "again (warm). compare_view_s*: the Compare tab's comparison of 4 methods at budget 32 on "
                      "the stored H200 landscape (replay), learned forecaster fitted on the shipped data, cold "
                      "(landscape read, forecaster fitted) then warm. stop_latency_s_*: SearchRunner.stop() to "
                      "the phase 'stopped' in the middle of a step whose forecaster takes stop_latency_slow_step_s "
                      "seconds (a deliberately slow test forecaster); stop_latency_s_fitting: the same while "
                      "the learned forecaster is fitted in its child process. heldout_forecasts_s_*: the "
                      "Calibration tab's held-out computation on the shipped H100 measurements (child process, "
                      "5 folds), empty fit cache then warm."),
        },
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out["metrics"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
