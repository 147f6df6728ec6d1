"""Live search throughput against the executor alone, in one run: does the search keep the GPU busy?

    PYTHONPATH=. python benchmarks/live_bench.py --out $OUT            # one GPU (cuda:0)
    PYTHONPATH=. python benchmarks/live_bench.py --ray --out $OUT      # every GPU, through Ray
    python benchmarks/live_bench.py --cpu --out /tmp/live              # smoke run (Triton interpreter)

Candidates: one family, the Triton zoo kernels of --problem and their mutation children. One
executor serves the whole run (started, and warmed on the zoo kernels, before anything is timed):
1. executor batch: `--batch` distinct mutation children of the zoo kernels, none of which the
   searches generate (their ids are left out of the searches' pools), submitted at once ->
   `executor_batch_per_min` (kernels measured per minute, first submit to last result);
2. live search: `SearchRun` with the mutation generator, the roofline forecaster (nothing to fit),
   screen_topk (--k, --m), `--in-flight` parents per step, `--budget` GPU measurements ->
   `live_search_per_min` (measurements per minute of `run()`), and `live_ratio` = 2 / 1;
3. with `--compare-one-in-flight`, the same search with one parent at a time ->
   `live_search_per_min_in_flight_1`.
With `--ray` (a local Ray cluster over every GPU of the machine): the live search runs on the
Ray executor with `--in-flight` x GPUs parents and budget x GPUs -> `live_search_per_min`,
`gpus`; then the same search on one GPU (LocalGPUExecutor, cuda:0, budget and in-flight of one
GPU) -> `live_search_per_min_one_gpu` and `ratio_to_one_gpu`.

Writes `<out>/live-<gpu>.json` (Ray: `live-<gpu>x<N>.json`), and into benchmarks/results/ only
with `--results` (never for --cpu: a smoke run is not a result).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # the device machine has no network

from _common import commit  # noqa: E402

DEFINITIONS = {
    "executor_batch_per_min": "distinct mutation children of the problem's Triton zoo kernels, submitted "
                              "at once to the warmed executor: kernels measured per minute, first submit "
                              "to last result",
    "live_search_per_min": "GPU measurements of a live search (mutation generator, roofline forecaster, "
                           "screen_topk) per minute of SearchRun.run(), on the same warmed executor",
    "live_ratio": "live_search_per_min / executor_batch_per_min (1 = the search keeps the executor as busy "
                  "as a batch does)",
    "live_search_per_min_in_flight_1": "the same search with one parent per step",
    "ratio_to_one_gpu": "Ray: live_search_per_min on every GPU / live_search_per_min of the one-GPU search",
}


def log(msg: str) -> None:
    print(f"[live {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def family(problem_id: str, n: int, seed: int):
    """The zoo's Triton kernels of the problem, and n distinct mutation children of them."""
    from workbench.search.mutations import neighbourhood
    from workbench.zoo import zoo_candidates

    zoo = [c for c in zoo_candidates(problem_id) if c.backend == "triton"]
    if not zoo:
        raise SystemExit(f"the zoo has no Triton kernel of {problem_id}; pick another --problem")
    seen, kids = {c.id for c in zoo}, []
    per = max(1, -(-n // len(zoo)))
    for c in zoo:
        for k in neighbourhood(c, per + 4, seed=seed + 7919, exclude=seen):
            if len(kids) < n and k.id not in seen:
                seen.add(k.id)
                kids.append(k)
    return zoo, kids


def measure_batch(executor, problem, cands) -> float:
    """Submit all at once; minutes from the first submit to the last result."""
    t0 = time.perf_counter()
    for f in executor.submit(problem, cands):
        f.result()
    return (time.perf_counter() - t0) / 60.0


class _Excluding:
    """A generator that never proposes the batch's candidates (so no kernel is measured twice)."""

    def __init__(self, inner, banned: set[str]):
        self.inner, self.banned, self.name = inner, banned, inner.name

    def seeds(self, problem):
        return self.inner.seeds(problem)

    def children(self, ctx):
        ctx.seen = set(ctx.seen) | self.banned
        return self.inner.children(ctx)

    def generation_info(self, candidate_id):
        return None


def live_search(store_dir: Path, name: str, problem, executor, budget: int, in_flight: int, args,
                banned: set[str]) -> dict:
    """One live search; its measurements per minute of run()."""
    from workbench.forecast.roofline import RooflineForecaster
    from workbench.search import MutationGenerator, SearchRun, ZooGenerator, make_method
    from workbench.store import Store

    with Store(store_dir / f"{name}.sqlite") as store:
        store.put_problems([problem])
        run = SearchRun(store, problem, executor, _Excluding(MutationGenerator(ZooGenerator()), banned),
                        RooflineForecaster(), make_method("screen_topk", k=args.k, m=args.m), budget=budget,
                        seed=args.seed, max_seeds=args.max_seeds, in_flight=in_flight, adapt_forecasts=False)
        t0 = time.perf_counter()
        summary = run.run()
        minutes = (time.perf_counter() - t0) / 60.0
    used = summary["gpu_measurements"]
    log(f"{name}: {used} measurements in {60 * minutes:.1f} s (in flight {in_flight}), "
        f"finished: {summary['finish_reason']}")
    return {"per_min": round(used / minutes, 2) if minutes > 0 else None, "measurements": used,
            "seconds": round(60 * minutes, 1), "in_flight": in_flight, "budget": budget,
            "finish_reason": summary["finish_reason"], "best_speedup": summary["best_speedup"],
            "failed_measurements": summary["failed_measurements"]}


def make_executor(args, ray: bool):
    """The executor of this run's target (`workbench.compose`): the local GPU 0 or the CPU
    interpreter (--cpu, two workers), through a local Ray cluster with `ray`."""
    from workbench.compose import make_executor as compose_executor
    from workbench.spec import Target

    target = Target.parse("cpu" if args.cpu else "cuda:0").with_executor("ray" if ray else "local")
    if args.cpu:
        return compose_executor(target, **({"num_cpus": 2} if ray else {"workers": 2}))
    return compose_executor(target)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problem", default="L1/01_softmax")
    ap.add_argument("--budget", type=int, default=48, help="GPU measurements of each search (x GPUs with --ray)")
    ap.add_argument("--batch", type=int, default=48, help="kernels of the executor batch")
    ap.add_argument("--in-flight", type=int, default=2, help="parents per step (x GPUs with --ray)")
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--m", type=int, default=2)
    ap.add_argument("--max-seeds", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--compare-one-in-flight", action="store_true")
    ap.add_argument("--ray", action="store_true", help="every GPU of the machine through a local Ray cluster")
    ap.add_argument("--cpu", action="store_true", help="smoke run on the CPU (Triton interpreter)")
    ap.add_argument("--out", help="directory for the JSON (required with --cpu)")
    ap.add_argument("--results", action="store_true", help="also write into benchmarks/results/")
    args = ap.parse_args(argv)
    if args.cpu and (not args.out or args.results):
        ap.error("--cpu is a smoke run: pass --out DIR, and no --results")
    out_dir = Path(args.out or os.environ.get("OUT") or ROOT / "benchmarks" / "results")

    from workbench.problems import get_problem

    problem = get_problem(args.problem)
    ex = make_executor(args, args.ray)
    gpus = 1
    if args.ray and not args.cpu:
        import torch

        gpus = max(1, torch.cuda.device_count())
    key = ex.hardware.key
    metrics: dict = {"problem": problem.id, "gpu_key": key}
    with tempfile.TemporaryDirectory() as tmp:
        zoo, kids = family(problem.id, args.batch, args.seed)
        banned = {c.id for c in kids}
        log(f"warming the executor on {len(zoo)} zoo kernels of {problem.id}")
        measure_batch(ex, problem, zoo)
        if not args.ray:
            minutes = measure_batch(ex, problem, kids)
            metrics["executor_batch_per_min"] = round(len(kids) / minutes, 2)
            metrics["executor_batch_kernels"] = len(kids)
            log(f"executor batch: {len(kids)} kernels in {60 * minutes:.1f} s")
        live = live_search(Path(tmp), "live", problem, ex, args.budget * gpus, args.in_flight * gpus, args, banned)
        metrics["live_search_per_min"] = live["per_min"]
        details = {"live_search": live}
        if not args.ray:
            metrics["live_ratio"] = round(live["per_min"] / metrics["executor_batch_per_min"], 3)
        if args.compare_one_in_flight and not args.ray:
            one = live_search(Path(tmp), "live-1", problem, ex, args.budget, 1, args, banned)
            metrics["live_search_per_min_in_flight_1"] = one["per_min"]
            details["live_search_in_flight_1"] = one
        ex.close()
        if args.ray:
            metrics["gpus"] = gpus
            single = make_executor(args, ray=False)
            measure_batch(single, problem, zoo)
            one = live_search(Path(tmp), "one-gpu", problem, single, args.budget, args.in_flight, args, banned)
            single.close()
            metrics["live_search_per_min_one_gpu"] = one["per_min"]
            metrics["ratio_to_one_gpu"] = round(live["per_min"] / one["per_min"], 3) if one["per_min"] else None
            details["one_gpu_search"] = one
    name = f"live-{key}x{gpus}.json" if args.ray and not args.cpu else f"live-{key}.json"
    data = {"benchmark": "live", "gpu": key if not args.ray or args.cpu else f"{key}x{gpus}",
            "date": time.strftime("%Y-%m-%d"), "commit": commit(), "metrics": metrics,
            "definitions": {k: v for k, v in DEFINITIONS.items() if k in metrics}, "details": details,
            "settings": {"k": args.k, "m": args.m, "max_seeds": args.max_seeds, "seed": args.seed,
                         "cpu_smoke": bool(args.cpu), "ray": bool(args.ray)}}
    text = json.dumps(data, indent=2) + "\n"
    targets = [out_dir / name] + ([ROOT / "benchmarks" / "results" / name] if args.results else [])
    for p in targets:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        log(f"wrote {p}")
    print(json.dumps(metrics, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
