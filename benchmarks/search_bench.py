"""Search methods at equal GPU budget, in replay mode on shipped measurements.

For each problem (>= 10) and seed (>= 5) every method runs a search with the same GPU budget,
answered from recorded measurements (CacheExecutor) with candidates from the replay cache
(ReplayGenerator). The forecaster never sees the searched problem's measurements: the learned
forecaster is fitted leave-one-problem-out.

Metrics per method (over problem x seed runs):
- final_best_speedup_median: median best measured speedup at the full budget (0 when none correct).
- win_or_tie_rate_equal_budget: share of runs whose final best >= measure_all's on the same
  problem and seed.
- budget_fraction_to_match_median: median over runs of (GPU measurements until the best reaches
  measure_all's median final best on that problem) / budget; a run that never matches counts as
  infinite, and the median is null when more than half never match. `match_rate` gives the
  share that matched.

    python benchmarks/search_bench.py --data kernels_cache/shipped --gpu h100 --budget 40 --seeds 5

writes benchmarks/results/search-<gpu>.json ({"benchmark", "gpu", "date", "commit", "metrics"}).
Only real shipped data may be written there; the tests run the same code on synthetic pools.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from workbench.execution.executors import CacheExecutor
from workbench.records import Problem
from workbench.search import ReplayGenerator, SearchRun, best_curve, make_method
from workbench.store import Store

RESULTS_DIR = Path(__file__).parent / "results"
METHODS = ("measure_all", "screen_topk", "selective", "uncertainty_aware")
BASELINE = "measure_all"
MIN_PROBLEMS, MIN_SEEDS = 10, 5

#: (records, held-out problem id) -> forecaster
ForecasterFactory = Callable[[Any, str], Any]


def learned_factory(records, held_out: str):
    """LearnedForecaster fitted on every problem except `held_out`."""
    from workbench.forecast.learned import LearnedForecaster

    ms = [m for m in records.measurements if m.problem_id != held_out]
    return LearnedForecaster().fit(records.problems, records.candidates, ms)


def roofline_factory(records, held_out: str):
    from workbench.forecast.roofline import RooflineForecaster

    return RooflineForecaster()


def run_one(store, problem: Problem, records, hardware_key: str, method: str, seed: int, budget: int,
            forecaster, k: int, m: int, method_kw: dict | None = None) -> dict[str, Any]:
    """One replayed search; returns its summary plus the best-so-far curve."""
    ms = [x for x in records.measurements if x.problem_id == problem.id and x.hardware_key == hardware_key]
    ex = CacheExecutor(ms, hardware_key)
    cands = [c for c in records.candidates if c.problem_id == problem.id]
    run = SearchRun(store, problem, ex, ReplayGenerator(cands, ex.candidate_ids),
                    forecaster,
                    make_method(method, k=k, m=m, **(method_kw or {})), budget=budget, seed=seed)
    summary = run.run()
    return {"problem_id": problem.id, "method": method, "seed": seed, "budget": budget,
            "best_speedup": summary["best_speedup"] or 0.0, "gpu_measurements": summary["gpu_measurements"],
            "considered": summary["candidates_considered"], "curve": best_curve(store.events(run.search_id))}


def eligible_problems(records, hardware_key: str, budget: int) -> list[Problem]:
    """Problems with more cached measurements on `hardware_key` than the budget (so the budget binds)."""
    counts: dict[str, int] = {}
    for x in records.measurements:
        if x.hardware_key == hardware_key:
            counts[x.problem_id] = counts.get(x.problem_id, 0) + 1
    return [p for p in records.problems if counts.get(p.id, 0) > budget]


def run_benchmark(records, hardware_key: str, budget: int, seeds: Sequence[int],
                  forecaster_factory: ForecasterFactory, problems: Sequence[Problem] | None = None,
                  methods: Sequence[str] = METHODS, k: int = 4, m: int = 4,
                  method_kw: dict[str, dict] | None = None, progress: bool = False) -> list[dict[str, Any]]:
    """Every method x problem x seed; returns the per-run results."""
    problems = list(problems) if problems is not None else eligible_problems(records, hardware_key, budget)
    out = []
    with tempfile.TemporaryDirectory(prefix="search_bench_") as tmp:
        with Store(Path(tmp) / "bench.sqlite") as store:
            for i, problem in enumerate(problems):
                forecaster = forecaster_factory(records, problem.id)
                for method in methods:
                    for seed in seeds:
                        out.append(run_one(store, problem, records, hardware_key, method, seed, budget, forecaster,
                                           k, m, (method_kw or {}).get(method)))
                if progress:
                    print(f"[{i + 1}/{len(problems)}] {problem.id}", file=sys.stderr)
    return out


def _median(xs: list[float]) -> float | None:
    if not xs:
        return None
    v = statistics.median(xs)
    return None if math.isinf(v) else v


def metrics(results: list[dict[str, Any]], baseline: str = BASELINE) -> dict[str, dict[str, Any]]:
    """The per-method metrics of the module docstring from `run_benchmark` results."""
    base = {(r["problem_id"], r["seed"]): r for r in results if r["method"] == baseline}
    target: dict[str, float] = {}
    for pid in {p for p, _ in base}:
        target[pid] = statistics.median(r["best_speedup"] for (p, _), r in base.items() if p == pid)
    out: dict[str, dict[str, Any]] = {}
    for method in sorted({r["method"] for r in results}, key=lambda x: (x != baseline, x)):
        runs = [r for r in results if r["method"] == method]
        wins, fracs = [], []
        for r in runs:
            b = base.get((r["problem_id"], r["seed"]))
            if b is not None:
                wins.append(r["best_speedup"] >= b["best_speedup"] * (1 - 1e-9))
            t = target.get(r["problem_id"])
            if t is not None:
                hit = next((used for used, best in r["curve"] if best >= t * (1 - 1e-9)), None)
                fracs.append(hit / r["budget"] if hit is not None else math.inf)
        out[method] = {
            "runs": len(runs),
            "final_best_speedup_median": _median([r["best_speedup"] for r in runs]),
            "win_or_tie_rate_equal_budget": sum(wins) / len(wins) if wins else None,
            "budget_fraction_to_match_median": _median(fracs),
            "match_rate": sum(1 for f in fracs if not math.isinf(f)) / len(fracs) if fracs else None,
            "candidates_considered_mean": statistics.fmean(r["considered"] for r in runs) if runs else None,
            "gpu_measurements_max": max((r["gpu_measurements"] for r in runs), default=0),
        }
    return out


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).parent, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=None, help="shipped data directory (default kernels_cache/shipped)")
    ap.add_argument("--gpu", default="h100", help="hardware key to replay")
    ap.add_argument("--budget", type=int, default=40)
    ap.add_argument("--seeds", type=int, default=MIN_SEEDS)
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--m", type=int, default=4)
    ap.add_argument("--forecaster", choices=("learned", "roofline"), default="learned")
    ap.add_argument("--max-problems", type=int, default=None)
    ap.add_argument("--out", default=None, help="default benchmarks/results/search-<gpu>.json")
    args = ap.parse_args(argv)

    from workbench.dataset.shipped import load_shipped

    records = load_shipped(args.data)
    problems = eligible_problems(records, args.gpu, args.budget)[: args.max_problems]
    if len(problems) < MIN_PROBLEMS or args.seeds < MIN_SEEDS:
        print(f"need >= {MIN_PROBLEMS} problems with more than {args.budget} measurements on {args.gpu} "
              f"(found {len(problems)}) and >= {MIN_SEEDS} seeds; nothing written", file=sys.stderr)
        return 1
    factory = learned_factory if args.forecaster == "learned" else roofline_factory
    t0 = time.time()
    results = run_benchmark(records, args.gpu, args.budget, list(range(args.seeds)), factory, problems,
                            k=args.k, m=args.m, progress=True)
    doc = {"benchmark": "search", "gpu": args.gpu, "date": time.strftime("%Y-%m-%d"), "commit": _commit(),
           "metrics": metrics(results),
           "setup": {"budget": args.budget, "seeds": args.seeds, "k": args.k, "m": args.m,
                     "forecaster": args.forecaster, "problems": [p.id for p in problems],
                     "mode": "replay", "seconds": round(time.time() - t0, 1)}}
    out = Path(args.out) if args.out else RESULTS_DIR / f"search-{args.gpu}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=2) + "\n")
    print(json.dumps(doc["metrics"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
