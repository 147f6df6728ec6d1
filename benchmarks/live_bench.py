"""Live search throughput against the executor alone, in one run: does the search keep the GPU busy?

    PYTHONPATH=. python benchmarks/live_bench.py --out $OUT --compare-one-in-flight --compare-in-flight 2
    PYTHONPATH=. python benchmarks/live_bench.py --ray --out $OUT      # every GPU, through Ray
    python benchmarks/live_bench.py --cpu --out /tmp/live              # smoke run (Triton interpreter)

Candidates: one family, the Triton zoo kernels of --problem and their mutation children. One
executor serves the whole run (started, and warmed on the zoo kernels, before anything is timed):
1. executor batch: `--batch` distinct mutation children of the zoo kernels, none of which the
   searches generate (their ids are left out of the searches' pools), submitted at once ->
   `executor_batch_per_min` (kernels measured per minute, first submit to last result);
2. live search: `SearchRun` with the mutation generator, the roofline forecaster (nothing to fit),
   screen_topk (--k, --m), `--budget` GPU measurements, `--in-flight` (default auto: pipelined,
   the executor kept holding as many candidates as it has workers; auto:N: N; a number P: P
   parents per step) -> `live_search_per_min` (measurements per minute of `run()`), `live_ratio`
   = 2 / 1, `live_mode` and `live_target_in_flight`, and the candidates the executor held while
   the search ran (`live_mean_in_flight` until the budget was all handed over, `live_max_in_flight`);
3. with `--compare-one-in-flight`, the same search with one parent per step ->
   `live_search_per_min_in_flight_1`; with `--compare-in-flight P`, with P parents per step ->
   `live_search_per_min_in_flight_P`; with `--compare-in-flight auto:N`, pipelined with N
   candidates in flight (more than the workers: a queue that never runs dry) ->
   `live_search_per_min_in_flight_auto_N` (and each comparison's `live_ratio_in_flight_*`);
4. with `--compare-linger S`, the pipelined live search again on a second local executor whose
   chunk workers wait up to S seconds for more candidates of their problem (ChunkedExecutor
   `linger_s`), with a compile cache of its own and warmed the same way ->
   `live_search_per_min_linger`, `live_ratio_linger` (over the same executor batch), `linger_s`.
   `--linger S` sets the run's own executor (batch and live search; `executor_linger_s`), so a
   candidate default is measured against the current one (`--linger 1 --compare-linger 0`).
The live search first measures its seeds (`--max-seeds`, fewer than the executor's workers) and
can expand a parent only once it is measured, so even a search with no overhead of its own
leaves workers idle for one measurement's time: with 4 seeds and 12 workers that alone caps it
at 0.8 to 0.86 of the batch's rate for a budget of 48 (equal measurement times give the lower
figure) and 0.89 to 0.92 for 96 (hence the default budget 96).
The searches' generator never proposes a batch kernel (`batch_kernels_searched` counts any the
executor got again, and must be 0).
With `--ray` (a local Ray cluster over every GPU of the machine): the live search runs on the
Ray executor (`--ray-mode actors`, the default: RayActorExecutor, one measuring actor per GPU;
`tasks`: RayExecutor, one task per candidate) (auto: pipelined, as many candidates in flight as
the executor measures at once; a number P: P x GPUs parents per step) with budget x GPUs ->
`live_search_per_min`, `gpus`; then the same search on one GPU (LocalGPUExecutor, cuda:0,
budget and setting of one GPU) -> `live_search_per_min_one_gpu` and `ratio_to_one_gpu`.

Writes `<out>/live-<gpu>.json` (Ray: `live-<gpu>x<N>.json`), and into benchmarks/results/ only
with `--results` (never for --cpu: a smoke run is not a result).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
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
    "live_mode": "pipelined (no step barrier; the executor kept holding live_target_in_flight candidates) "
                 "or steps (live_target_in_flight parents per step)",
    "live_target_in_flight": "pipelined: candidates kept with the executor (auto = its workers); steps: parents "
                             "per step",
    "live_mean_in_flight": "candidates the executor held, time-weighted mean from the live search's first "
                           "submission to its last (after which the budget is all handed over)",
    "live_max_in_flight": "most candidates the executor held at once during the live search",
    "batch_kernels_searched": "executor-batch kernels the live searches handed to the executor again (0: the "
                              "searches never measure the batch's candidates)",
    "live_search_per_min_in_flight_1": "the same search with one parent per step",
    "executor_linger_s": "how long the chunk workers of the run's executor (batch and live search) wait for "
                         "more candidates of their problem (ChunkedExecutor linger_s)",
    "linger_s": "how long the chunk workers of the linger comparison wait for more candidates of their problem",
    "live_search_per_min_linger": "the pipelined live search on a second executor (own compile cache, warmed "
                                  "the same way) whose chunk workers linger linger_s seconds",
    "live_ratio_linger": "live_search_per_min_linger / executor_batch_per_min",
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


class Held:
    """Wraps an executor; logs (time, candidates it holds) at each submission and each result,
    and the ids it was handed."""

    def __init__(self, inner):
        self.inner, self.hardware = inner, inner.hardware
        self.capacity = getattr(inner, "capacity", 1)
        self.submitted: list[str] = []
        self.log: list[tuple[float, int]] = []
        self._held, self._lock = 0, threading.Lock()

    def _change(self, d: int) -> None:
        with self._lock:
            self._held += d
            self.log.append((time.perf_counter(), self._held))

    def submit(self, problem, candidates):
        self.submitted += [c.id for c in candidates]
        futures = self.inner.submit(problem, candidates)
        for f in futures:
            self._change(+1)
            f.add_done_callback(lambda _f: self._change(-1))
        return futures

    def stats(self) -> dict:
        """Mean held from the first submission to the last one (time-weighted), and the max."""
        log = list(self.log)
        if not log:
            return {"mean_in_flight": None, "max_in_flight": 0}
        last = max((t for (t, h), (_, before) in zip(log[1:], log) if h > before), default=log[0][0])
        total = sum(h * (min(t1, last) - t0) for (t0, h), (t1, _) in zip(log, log[1:]) if t0 < last)
        mean = total / (last - log[0][0]) if last > log[0][0] else float(log[0][1])
        return {"mean_in_flight": round(mean, 2), "max_in_flight": max(h for _, h in log)}

    def close(self) -> None:
        self.inner.close()


def live_search(store_dir: Path, name: str, problem, executor, budget: int, in_flight, args,
                banned: set[str]) -> dict:
    """One live search; its measurements per minute of run(). `in_flight`: a number of parents
    per step, "auto" or "auto:N" (pipelined; see workbench.search.pipeline)."""
    from workbench.forecast.roofline import RooflineForecaster
    from workbench.search import MutationGenerator, SearchRun, ZooGenerator, make_method
    from workbench.search.pipeline import in_flight_setting
    from workbench.store import Store

    held = Held(executor)
    setting = in_flight_setting(in_flight, executor)
    with Store(store_dir / f"{name}.sqlite") as store:
        store.put_problems([problem])
        run = SearchRun(store, problem, held, _Excluding(MutationGenerator(ZooGenerator()), banned),
                        RooflineForecaster(), make_method("screen_topk", k=args.k, m=args.m), budget=budget,
                        seed=args.seed, max_seeds=args.max_seeds, adapt_forecasts=False, **setting)
        t0 = time.perf_counter()
        summary = run.run()
        minutes = (time.perf_counter() - t0) / 60.0
    used = summary["gpu_measurements"]
    mode = "pipelined" if setting["pipeline"] else "steps"
    target = setting["pipeline"] or setting["in_flight"]
    out = {"per_min": round(used / minutes, 2) if minutes > 0 else None, "measurements": used,
           "seconds": round(60 * minutes, 1), "mode": mode, "target_in_flight": target,
           "executor_capacity": held.capacity, **held.stats(), "budget": budget,
           "finish_reason": summary["finish_reason"], "best_speedup": summary["best_speedup"],
           "failed_measurements": summary["failed_measurements"], "expansions": summary["steps"],
           "batch_kernels_searched": len(set(held.submitted) & banned)}
    log(f"{name}: {used} measurements in {60 * minutes:.1f} s ({mode}, target {target}, executor held "
        f"{out['mean_in_flight']} on average, {out['max_in_flight']} at most), finished: {summary['finish_reason']}")
    return out


def make_executor(args, ray: bool, **options):
    """The executor of this run's target (`workbench.compose`): the local GPU 0 or the CPU
    interpreter (--cpu, two workers), through a local Ray cluster with `ray`; `options` go to
    the GPU executor's constructor."""
    from workbench.compose import make_executor as compose_executor
    from workbench.spec import Target

    target = Target.parse("cpu" if args.cpu else "cuda:0").with_executor("ray" if ray else "local")
    if ray:
        options = {"ray_mode": args.ray_mode, **options}
    if args.cpu:
        return compose_executor(target, **({"num_cpus": 2, **options} if ray else {"workers": 2}))
    return compose_executor(target, **options)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problem", default="L1/01_softmax")
    ap.add_argument("--budget", type=int, default=96, help="GPU measurements of each search (x GPUs with --ray)")
    ap.add_argument("--batch", type=int, default=48, help="kernels of the executor batch")
    ap.add_argument("--in-flight", default="auto", help="auto (pipelined, the executor's workers), auto:N "
                    "(pipelined, N candidates) or P parents per step (x GPUs with --ray)")
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--m", type=int, default=2)
    ap.add_argument("--max-seeds", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--compare-one-in-flight", action="store_true", help="also: one parent per step")
    ap.add_argument("--compare-in-flight", metavar="P|auto:N",
                    help="also: P parents per step, or pipelined with N candidates in flight")
    ap.add_argument("--linger", type=float, metavar="S", default=None,
                    help="the run's executor: chunk workers linger S seconds (default: the executor's default)")
    ap.add_argument("--compare-linger", type=float, metavar="S",
                    help="also: the pipelined search on an executor whose chunk workers linger S seconds")
    ap.add_argument("--ray", action="store_true", help="every GPU of the machine through a local Ray cluster")
    ap.add_argument("--ray-mode", choices=("actors", "tasks"), default="actors",
                    help="with --ray: one measuring actor per GPU (default) or one Ray task per candidate")
    ap.add_argument("--cpu", action="store_true", help="smoke run on the CPU (Triton interpreter)")
    ap.add_argument("--out", help="directory for the JSON (required with --cpu)")
    ap.add_argument("--results", action="store_true", help="also write into benchmarks/results/")
    args = ap.parse_args(argv)
    from workbench.errors import ConfigError
    from workbench.search.pipeline import parse_in_flight

    try:
        args.in_flight = parse_in_flight(args.in_flight)
        if args.compare_in_flight is not None:
            args.compare_in_flight = parse_in_flight(args.compare_in_flight)
    except ConfigError as e:
        ap.error(str(e))
    if args.cpu and (not args.out or args.results):
        ap.error("--cpu is a smoke run: pass --out DIR, and no --results")
    for flag, value in (("--linger", args.linger), ("--compare-linger", args.compare_linger)):
        if value is not None and (args.cpu or args.ray):
            ap.error(f"{flag} sets local GPU executors: not with --cpu or --ray")
        if value is not None and not 0 <= value <= 60:
            ap.error(f"{flag} is seconds in [0, 60], got {value}")
    from workbench.execution.executors import GPU_LINGER_S

    if args.compare_linger is not None and args.compare_linger == (
            args.linger if args.linger is not None else GPU_LINGER_S):
        ap.error(f"--compare-linger {args.compare_linger} is the run's own executor setting: compare another")
    out_dir = Path(args.out or os.environ.get("OUT") or ROOT / "benchmarks" / "results")

    from workbench.problems import get_problem

    problem = get_problem(args.problem)
    ex = make_executor(args, args.ray, **({"linger_s": args.linger} if args.linger is not None else {}))
    gpus = 1
    if args.ray and not args.cpu:
        import torch

        gpus = max(1, torch.cuda.device_count())
    key = ex.hardware.key
    metrics: dict = {"problem": problem.id, "gpu_key": key}
    if not args.ray and not args.cpu:
        metrics["executor_linger_s"] = getattr(ex, "linger_s", None)
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
        setting = args.in_flight * gpus if isinstance(args.in_flight, int) else args.in_flight
        live = live_search(Path(tmp), "live", problem, ex, args.budget * gpus, setting, args, banned)
        metrics["live_search_per_min"] = live["per_min"]
        metrics.update(live_mode=live["mode"], live_target_in_flight=live["target_in_flight"],
                       live_mean_in_flight=live["mean_in_flight"], live_max_in_flight=live["max_in_flight"])
        details = {"live_search": live}
        if not args.ray:
            metrics["live_ratio"] = round(live["per_min"] / metrics["executor_batch_per_min"], 3)
        compare = ([1] if args.compare_one_in_flight else []) + ([args.compare_in_flight] if args.compare_in_flight
                                                                 not in (None, 1) else [])
        metrics["batch_kernels_searched"] = live["batch_kernels_searched"]
        write(args, out_dir, key, gpus, metrics, details, complete=False)
        for p in compare if not args.ray else []:
            one = live_search(Path(tmp), f"live-{p}", problem, ex, args.budget, p, args, banned)
            tag = str(p).replace(":", "_")
            metrics[f"live_search_per_min_in_flight_{tag}"] = one["per_min"]
            if "executor_batch_per_min" in metrics:
                metrics[f"live_ratio_in_flight_{tag}"] = round(one["per_min"] / metrics["executor_batch_per_min"], 3)
            metrics["batch_kernels_searched"] += one["batch_kernels_searched"]
            details[f"live_search_in_flight_{tag}"] = one
            write(args, out_dir, key, gpus, metrics, details, complete=False)
        ex.close()
        if args.compare_linger is not None:
            lex = make_executor(args, ray=False, linger_s=args.compare_linger,
                                cache_root=Path(tmp) / "linger-compile-cache")
            measure_batch(lex, problem, zoo)
            one = live_search(Path(tmp), "live-linger", problem, lex, args.budget, args.in_flight, args, banned)
            lex.close()
            metrics.update(linger_s=args.compare_linger, live_search_per_min_linger=one["per_min"],
                           live_ratio_linger=round(one["per_min"] / metrics["executor_batch_per_min"], 3))
            metrics["batch_kernels_searched"] += one["batch_kernels_searched"]
            details["live_search_linger"] = one
        if args.ray:
            metrics["gpus"] = gpus
            single = make_executor(args, ray=False)
            measure_batch(single, problem, zoo)
            one = live_search(Path(tmp), "one-gpu", problem, single, args.budget, args.in_flight, args, banned)
            single.close()
            metrics["live_search_per_min_one_gpu"] = one["per_min"]
            metrics["batch_kernels_searched"] += one["batch_kernels_searched"]
            metrics["ratio_to_one_gpu"] = round(live["per_min"] / one["per_min"], 3) if one["per_min"] else None
            details["one_gpu_search"] = one
    write(args, out_dir, key, gpus, metrics, details, complete=True)
    print(json.dumps(metrics, indent=2))
    return 0


def write(args, out_dir: Path, key: str, gpus: int, metrics: dict, details: dict, complete: bool) -> None:
    """The results file; written after each phase (`settings.complete` false until the last), so
    a run cut short by a time limit still leaves what it measured. benchmarks/results/ (with
    --results) gets the complete file only."""
    name = f"live-{key}x{gpus}.json" if args.ray and not args.cpu else f"live-{key}.json"
    definitions = {k: v for k, v in DEFINITIONS.items() if k in metrics}
    for k in metrics:
        tag = k.split("_in_flight_", 1)[1] if "_in_flight_" in k else ""
        what = (f"pipelined with {tag[5:]} candidates in flight" if tag.startswith("auto_")
                else f"with {tag} parents per step")
        if k.startswith("live_search_per_min_in_flight_") and k not in definitions:
            definitions[k] = f"the same search {what}"
        if k.startswith("live_ratio_in_flight_"):
            definitions[k] = f"the same search {what}: its measurements per minute / executor_batch_per_min"
    data = {"benchmark": "live", "gpu": key if not args.ray or args.cpu else f"{key}x{gpus}",
            "date": time.strftime("%Y-%m-%d"), "commit": commit(), "metrics": metrics,
            "definitions": definitions, "details": details,
            "settings": {"k": args.k, "m": args.m, "max_seeds": args.max_seeds, "seed": args.seed,
                         "budget": args.budget, "batch": args.batch, "in_flight": args.in_flight,
                         "linger": args.linger, "compare_linger": args.compare_linger,
                         "cpu_smoke": bool(args.cpu), "ray": bool(args.ray),
                         "ray_mode": args.ray_mode if args.ray else None, "complete": complete}}
    text = json.dumps(data, indent=2) + "\n"
    targets = [out_dir / name] + ([ROOT / "benchmarks" / "results" / name] if args.results and complete else [])
    for p in targets:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        log(f"wrote {p}{'' if complete else ' (so far)'}")


if __name__ == "__main__":
    sys.exit(main())
