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

Live mode measures on a real GPU (LocalGPUExecutor, one executor shared by all runs; each run
measures its own candidates, so every method's GPU budget is exact), with zoo seeds and mutation
children, and the learned forecaster fitted on the shipped H100 rows of the other problems:

    PYTHONPATH=. python benchmarks/search_bench.py --live --gpu cuda:0 --seeds 1 --budget 12 --out DIR

It adds `metrics.live` (per method, the same keys, over the problem x seed pairs on which every
method completed) and `live` (setup, hardware, per-run wall time, GPU measurements and best
speedup, runs skipped by the --budget-s wall-clock guard) to search-<gpu type>.json, both in
benchmarks/results/ and in DIR. `--gpu cpu` (interpreter, a smoke test) writes only DIR/search-cpu.json.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from workbench.execution.executors import CacheExecutor
from workbench.records import Problem
from workbench.search import ReplayGenerator, SearchRun, best_curve, make_method
from workbench.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import commit  # noqa: E402

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


def search_once(store, problem: Problem, executor, generator, forecaster, method: str, seed: int, budget: int,
                k: int, m: int, method_kw: dict | None = None, **run_kw) -> dict[str, Any]:
    """One search with the given components; returns its summary plus the best-so-far curve."""
    run = SearchRun(store, problem, executor, generator, forecaster,
                    make_method(method, k=k, m=m, **(method_kw or {})), budget=budget, seed=seed, **run_kw)
    summary = run.run()
    return {"problem_id": problem.id, "method": method, "seed": seed, "budget": budget,
            "best_speedup": summary["best_speedup"] or 0.0, "gpu_measurements": summary["gpu_measurements"],
            "considered": summary["candidates_considered"], "finish_reason": summary["finish_reason"],
            "curve": best_curve(store.events(run.search_id))}


def run_one(store, problem: Problem, records, hardware_key: str, method: str, seed: int, budget: int,
            forecaster, k: int, m: int, method_kw: dict | None = None) -> dict[str, Any]:
    """One replayed search; returns its summary plus the best-so-far curve."""
    ms = [x for x in records.measurements if x.problem_id == problem.id and x.hardware_key == hardware_key]
    ex = CacheExecutor(ms, hardware_key)
    cands = [c for c in records.candidates if c.problem_id == problem.id]
    return search_once(store, problem, ex, ReplayGenerator(cands, ex.candidate_ids), forecaster, method, seed,
                       budget, k, m, method_kw)


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


# --------------------------------------------------------------------------- live mode
#: Cheap to measure on an H100 (reference and compile times small in the shipped data), several
#: zoo kernels each, one problem per level.
LIVE_PROBLEMS = ("L1/01_softmax", "L2/08_residual_layernorm", "L3/02_gated_mlp_swiglu_bf16")
#: Finish reasons under which a run may end with fewer GPU measurements than its budget.
RAN_DRY = ("exhausted", "no usable parent")


def live_executor(gpu: str):
    """`cuda[:N]` -> LocalGPUExecutor on GPU N; `cpu` -> CPUExecutor (Triton interpreter, for tests)."""
    from workbench.errors import ConfigError

    if gpu == "cpu":
        from workbench.execution.executors import CPUExecutor

        return CPUExecutor()
    if gpu.startswith("cuda"):
        from workbench.execution.executors import LocalGPUExecutor

        return LocalGPUExecutor(gpus=[int(gpu.split(":", 1)[1]) if ":" in gpu else 0])
    raise ConfigError(f"--gpu {gpu!r} is not a live device; use cuda:0 (or cpu for a smoke test)")


def budget_exact(run: dict[str, Any]) -> bool:
    """The run used its whole budget, or fewer only because the generator ran dry."""
    if run["gpu_measurements"] == run["budget"]:
        return True
    return run["gpu_measurements"] < run["budget"] and run["finish_reason"].startswith(RAN_DRY)


def run_live(records, problems: Sequence[Problem], executor, seeds: Sequence[int], budget: int,
             forecaster_factory: ForecasterFactory, methods: Sequence[str] = METHODS, k: int = 4, m: int = 4,
             max_seeds: int = 4, budget_s: float = 420.0, progress: bool = True) -> dict[str, Any]:
    """Every problem x seed x method measured live on `executor` (shared; each run measures its own
    candidates, so each method's GPU budget is exact). Candidates: zoo seeds + mutations.

    No new run starts once `budget_s` seconds (wall clock, fits included) have passed; those runs
    are listed in "skipped". Returns {"runs", "skipped", "seconds"}; each run carries `wall_s`.
    """
    from workbench.search import MutationGenerator, ZooGenerator

    t0 = time.monotonic()
    runs: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    plan = [(p, s, meth) for s in seeds for p in problems for meth in methods]
    forecasters: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="search_live_") as tmp, Store(Path(tmp) / "live.sqlite") as store:
        for i, (problem, seed, method) in enumerate(plan):
            if time.monotonic() - t0 > budget_s:
                skipped.append({"problem_id": problem.id, "method": method, "seed": seed})
                continue
            if problem.id not in forecasters:
                forecasters[problem.id] = forecaster_factory(records, problem.id)
            t1 = time.monotonic()
            r = search_once(store, problem, executor, MutationGenerator(ZooGenerator()), forecasters[problem.id],
                            method, seed, budget, k, m, max_seeds=max_seeds)
            r["wall_s"] = round(time.monotonic() - t1, 2)
            r["budget_exact"] = budget_exact(r)
            runs.append(r)
            if progress:
                print(f"[{i + 1}/{len(plan)}] {problem.id} {method} seed {seed}: best {r['best_speedup']:.3f}x, "
                      f"{r['gpu_measurements']}/{budget} GPU measurements, {r['wall_s']:.1f} s", file=sys.stderr)
    return {"runs": runs, "skipped": skipped, "seconds": round(time.monotonic() - t0, 1)}


def live_metrics(runs: list[dict[str, Any]], methods: Sequence[str] = METHODS) -> dict[str, dict[str, Any]]:
    """`metrics` over the (problem, seed) pairs on which every method completed."""
    done: dict[tuple[str, int], set[str]] = {}
    for r in runs:
        done.setdefault((r["problem_id"], r["seed"]), set()).add(r["method"])
    full = {key for key, ms in done.items() if set(methods) <= ms}
    return metrics([r for r in runs if (r["problem_id"], r["seed"]) in full])


def h100_factory(records, held_out: str):
    """LearnedForecaster fitted on the shipped H100 rows of every problem except `held_out`."""
    from workbench.forecast.learned import LearnedForecaster

    ms = [x for x in records.measurements if x.problem_id != held_out and x.hardware_key == "h100"]
    return LearnedForecaster().fit(records.problems, records.candidates, ms)


def live_main(args) -> int:
    """--live: measure on args.gpu, merge `metrics.live` into the replay results file."""
    from workbench.dataset.shipped import load_shipped
    from workbench.problems import get_problem

    records = load_shipped(args.data)
    problems = [get_problem(pid) for pid in (args.problems.split(",") if args.problems else LIVE_PROBLEMS)]
    factory = h100_factory if args.forecaster == "learned" else roofline_factory
    methods = args.methods.split(",") if args.methods else list(METHODS)
    executor = live_executor(args.gpu)
    try:
        out = run_live(records, problems, executor, list(range(args.seeds)), args.budget, factory, methods,
                       k=args.k, m=args.m, max_seeds=args.max_seeds, budget_s=args.budget_s)
    finally:
        executor.close()
    hw = executor.hardware
    live = live_metrics(out["runs"], methods)
    details = {"mode": "live", "device": args.gpu, "hardware": hw.to_dict(),
               "hardware_fingerprint": hw.fingerprint, "problems": [p.id for p in problems],
               "seeds": args.seeds, "budget": args.budget, "k": args.k, "m": args.m, "max_seeds": args.max_seeds,
               "forecaster": args.forecaster + (" (shipped h100 rows of the other problems)"
                                                if args.forecaster == "learned" else ""),
               "generator": "mutation (zoo seeds)", "methods": methods,
               "gpu_measurements_used": sum(r["gpu_measurements"] for r in out["runs"]),
               "budget_exact_all": all(r["budget_exact"] for r in out["runs"]),
               "seconds": out["seconds"], "budget_s": args.budget_s, "completed": len(out["runs"]),
               "skipped": out["skipped"],
               "runs": [{k_: r[k_] for k_ in ("problem_id", "method", "seed", "budget", "gpu_measurements",
                                              "best_speedup", "considered", "finish_reason", "budget_exact",
                                              "wall_s", "curve")} for r in out["runs"]]}
    out_dir = Path(args.out) if args.out else None
    if hw.key == "cpu":
        # Interpreter timings are never merged into a GPU results file.
        doc = {"benchmark": "search", "gpu": "cpu", "date": time.strftime("%Y-%m-%d"), "commit": commit(),
               "metrics": {"live": live}, "live": details}
        if out_dir is None:
            print("--gpu cpu writes only to --out DIR; nothing written", file=sys.stderr)
            print(json.dumps(live, indent=2))
            return 0
        targets = [out_dir / "search-cpu.json"]
    else:
        name = f"search-{hw.key}.json"
        base = RESULTS_DIR / name
        doc = json.loads(base.read_text()) if base.exists() else {"benchmark": "search", "gpu": hw.key, "metrics": {}}
        doc["metrics"]["live"] = live
        doc["live"] = {**details, "date": time.strftime("%Y-%m-%d"), "commit": commit()}
        targets = [base] + ([out_dir / name] if out_dir else [])
    for t in targets:
        t.parent.mkdir(parents=True, exist_ok=True)
        t.write_text(json.dumps(doc, indent=2) + "\n")
        print(f"wrote {t}", file=sys.stderr)
    print(json.dumps(live, indent=2))
    return 0


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
    ap.add_argument("--out", default=None, help="default benchmarks/results/search-<gpu>.json; with --live "
                    "a directory that gets a copy (the only output of a --gpu cpu run)")
    ap.add_argument("--live", action="store_true", help="measure on --gpu cuda:N (or cpu, smoke test only) with "
                    "mutation candidates; merges metrics.live into benchmarks/results/search-<gpu type>.json")
    ap.add_argument("--problems", default=None, help="--live: comma-separated ids (default "
                    + ",".join(LIVE_PROBLEMS) + ")")
    ap.add_argument("--methods", default=None, help="--live: comma-separated subset of the methods")
    ap.add_argument("--max-seeds", type=int, default=4, help="--live: zoo seeds measured at step 0")
    ap.add_argument("--budget-s", type=float, default=420.0,
                    help="--live: start no new run after this many seconds (wall clock)")
    args = ap.parse_args(argv)
    if args.live:
        return live_main(args)

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
    doc = {"benchmark": "search", "gpu": args.gpu, "date": time.strftime("%Y-%m-%d"), "commit": commit(),
           "metrics": metrics(results),
           "setup": {"budget": args.budget, "seeds": args.seeds, "k": args.k, "m": args.m,
                     "forecaster": args.forecaster, "problems": [p.id for p in problems],
                     "mode": "replay", "seconds": round(time.time() - t0, 1)}}
    out = Path(args.out) if args.out else RESULTS_DIR / f"search-{args.gpu}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists():  # a replay re-run keeps the live runs recorded in the same file
        old = json.loads(out.read_text())
        if "live" in old.get("metrics", {}):
            doc["metrics"]["live"] = old["metrics"]["live"]
            doc["live"] = old["live"]
    out.write_text(json.dumps(doc, indent=2) + "\n")
    print(json.dumps(doc["metrics"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
