"""Ray executor throughput: one batch of Triton candidates through Ray on 1 GPU, then on 2.

Run on the 2-GPU device machine (torch, triton, numpy and ray importable; PYTHONPATH=.):

    PYTHONPATH=. python benchmarks/ray_bench.py --out $OUT --budget-s 540

and on a CPU machine, to check the script (Triton interpreter, 1 then 2 CPU workers):

    python benchmarks/ray_bench.py --device cpu --n 4 --out /tmp/raybench

The batch: the first --problems level-1 problems (sorted ids) that have Triton zoo kernels,
each with its zoo kernels then their deterministic mutation neighbours, --n candidates in all,
distinct ids. Each run starts a fresh local Ray cluster of 1 (then 2) GPUs with a fresh, empty
build cache (Triton, extensions), so both runs are cold. Throughput = candidates measured per
minute from the first submit to the last result (cluster start and the executor's GPU probe
excluded; both are reported). If --budget-s cuts the first run, the second measures exactly the
candidates the first finished, so both rates are over the same batch.

Writes under --out:
  ray-<key>x2.json (or --name)           benchmark, gpu, date, commit, metrics, details
  measurements-ray-<key>-<N>gpu.jsonl    one Measurement per candidate and run (written as each
                                         arrives), the dataset's row format
  candidates-ray-<key>.jsonl             the Candidate records of the batch (for ingesting)
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # the device machine has no network

from workbench.execution.ray_executor import RayExecutor, import_ray  # noqa: E402
from workbench.problems import get_problem  # noqa: E402
from workbench.records import Candidate  # noqa: E402
from workbench.search.mutations import neighbourhood  # noqa: E402
from workbench.zoo import zoo_candidates  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import commit, wait_measurements  # noqa: E402

GPU_OPTIONS: dict = {}  # the executor's default seeds, checks and adaptive timing
CPU_OPTIONS = {"seeds": [0, 1], "cpu_timing": {"max_total_ms": 100, "max_runs": 5}}


def log(msg: str) -> None:
    print(f"[ray-bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def build_batch(n: int, n_problems: int, neighbours: int, seed: int) -> list[Candidate]:
    """n distinct Triton candidates over the first n_problems level-1 problems, about n/n_problems
    each: zoo kernels first, then mutation neighbours of each (deterministic given seed)."""
    by_problem: dict[str, list[Candidate]] = collections.defaultdict(list)
    for c in zoo_candidates():
        if c.backend == "triton" and c.problem_id.startswith("L1/"):
            by_problem[c.problem_id].append(c)
    problems = sorted(by_problem)[:n_problems]
    per, extra = divmod(n, len(problems))
    batch: list[Candidate] = []
    for i, pid in enumerate(problems):
        want = per + (1 if i < extra else 0)
        seen: set[str] = set()

        def take(cs) -> None:
            for c in cs:
                if len(seen) < want and c.id not in seen:
                    seen.add(c.id)
                    batch.append(c)

        take(by_problem[pid])
        for c in by_problem[pid]:  # neighbours only where the zoo has too few (mutating is slow)
            if len(seen) < want:
                take(neighbourhood(c, neighbours, seed=seed))
    if len(batch) < n:
        raise SystemExit(f"only {len(batch)} distinct candidates; raise --neighbours or --problems")
    return batch


def measure_run(batch: list[Candidate], count: int, args, deadline: float, out_path: Path) -> dict:
    """Measure `batch` on a fresh local Ray cluster of `count` GPUs (CPUs in cpu mode)."""
    t_init = time.monotonic()
    sizes = {"num_gpus": count, "num_cpus": args.cpus} if args.device == "cuda" else {"num_gpus": 0, "num_cpus": count}
    ex = RayExecutor(device=args.device, chunk_size=args.chunk, workers_per_task=args.workers,
                     max_retries=2, timeout_s=args.timeout_s, run_timeout_s=args.run_timeout_s,
                     options=GPU_OPTIONS if args.device == "cuda" else CPU_OPTIONS,
                     cache_root=tempfile.mkdtemp(prefix="wb_ray_bench_cache_"), **sizes)
    startup_s = time.monotonic() - t_init
    log(f"{count} {'GPU' if args.device == 'cuda' else 'CPU'} cluster up in {startup_s:.1f} s "
        f"({ex.hardware.name}); measuring {len(batch)} candidates")
    by_problem: dict[str, list[Candidate]] = collections.defaultdict(list)
    for c in batch:
        by_problem[c.problem_id].append(c)
    t0 = time.monotonic()
    futures = {}
    for pid, cs in by_problem.items():
        for c, f in zip(cs, ex.submit(get_problem(pid), cs)):
            futures[f] = c
    done, elapsed, cut = wait_measurements(futures, deadline, out_path, t0, mode="w",
                                           progress=lambda n, new, s: log(f"{count}x: {n}/{len(batch)} in {s:.0f} s"))
    placements = dict(ex.placements)
    ex.close()  # cancels what a cut left running; shuts the cluster down

    def where(cid: str) -> str:  # host:gpuN on GPUs, host:pidN (the Ray worker) on CPUs
        p = placements.get(cid, {})
        return f"{p.get('host')}:gpu{p['gpu']}" if p.get("gpu") is not None else f"{p.get('host')}:pid{p.get('pid')}"

    per_gpu = collections.Counter(where(cid) for cid in done)
    gpus = {}
    for cid, m in done.items():
        gpu = where(cid)
        if gpu not in gpus and m.hardware_json:
            gpus[gpu] = m.hardware.to_dict() | {"fingerprint": m.hardware.fingerprint}
    return {"measured": len(done), "elapsed_s": round(elapsed, 2), "startup_s": round(startup_s, 2),
            "per_min": round(60 * len(done) / elapsed, 2) if elapsed > 0 else None, "cut_by_budget": cut,
            "status_counts": dict(collections.Counter(m.status.value for m in done.values())),
            "candidates_per_gpu": dict(per_gpu), "gpus": gpus, "hardware": ex.hardware.to_dict(),
            "done_ids": list(done)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--n", type=int, default=96, help="candidates in the batch (default 96)")
    ap.add_argument("--problems", type=int, default=12, help="level-1 problems the batch spans (default 12)")
    ap.add_argument("--neighbours", type=int, default=8, help="mutation neighbours per zoo kernel")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--chunk", type=int, default=8, help="candidates per Ray task (default 8)")
    ap.add_argument("--workers", type=int, default=4, help="worker processes per task (default 4)")
    ap.add_argument("--cpus", type=int, default=None, help="CPUs of the local cluster in GPU mode (default: all)")
    ap.add_argument("--gpus", default="1,2", help="cluster sizes to compare, in order (default 1,2)")
    ap.add_argument("--timeout-s", type=float, default=90.0, help="compile+correctness budget per candidate")
    ap.add_argument("--run-timeout-s", type=float, default=60.0, help="timing budget per candidate")
    ap.add_argument("--budget-s", type=float, default=540.0, help="stop waiting after this many seconds in all")
    ap.add_argument("--first-share", type=float, default=0.6, help="share of the budget the first run may use")
    ap.add_argument("--name", default=None, help="results file name (default ray-<key>x<max gpus>.json)")
    args = ap.parse_args(argv)
    t_start = time.time()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.device == "cpu":
        args.workers = 1  # each CPU task is one worker process
    counts = [int(x) for x in args.gpus.split(",") if x.strip()]
    batch = build_batch(args.n, args.problems, args.neighbours, args.seed)
    log(f"batch: {len(batch)} candidates over {len({c.problem_id for c in batch})} problems")
    ray_version = import_ray().__version__
    runs: dict[str, dict] = {}
    key = None
    for i, count in enumerate(counts):
        left = args.budget_s - (time.time() - t_start)
        deadline = time.time() + (left * args.first_share if i == 0 and len(counts) > 1 else left)
        label = f"{count}{'gpu' if args.device == 'cuda' else 'cpu'}"
        path = args.out / f"measurements-ray-{label}.jsonl"
        run = measure_run(batch, count, args, deadline, path)
        key = run["hardware"]["key"]
        path.rename(args.out / f"measurements-ray-{key}-{label}.jsonl")
        runs[label] = run
        if run["cut_by_budget"]:  # the next runs measure exactly what this one finished
            keep = set(run["done_ids"])
            batch = [c for c in batch if c.id in keep]
            log(f"budget cut the {label} run: later runs measure its {len(batch)} finished candidates")
    with open(args.out / f"candidates-ray-{key}.jsonl", "w") as fh:
        for c in batch:
            fh.write(json.dumps(c.to_dict()) + "\n")
    first, last = runs[f"{counts[0]}{'gpu' if args.device == 'cuda' else 'cpu'}"], list(runs.values())[-1]
    same_batch = all(set(r["done_ids"]) >= {c.id for c in batch} for r in runs.values())
    scaling = round(last["per_min"] / first["per_min"], 3) if first["per_min"] and last["per_min"] else None
    for r in runs.values():
        r.pop("done_ids")
    hw = first["hardware"]
    result = {
        "benchmark": "ray",
        "gpu": hw["name"] if args.device == "cuda" else "cpu (Triton interpreter)",
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commit": commit(),
        "metrics": {"candidates": len(batch), "per_min_1gpu": first["per_min"], "per_min_2gpu": last["per_min"],
                    "scaling": scaling},
        "details": {
            "device": args.device, "cluster_sizes": counts, "ray_version": ray_version,
            "cache": "cold: each run starts a fresh local Ray cluster with a new, empty build cache",
            "throughput": "candidates with a Measurement per minute, first submit to last result; "
                          "cluster start and GPU probe excluded (startup_s)",
            "same_batch_in_every_run": same_batch,
            "chunk_size": args.chunk, "workers_per_task": args.workers, "options": (GPU_OPTIONS or "executor defaults")
            if args.device == "cuda" else CPU_OPTIONS, "problems": sorted({c.problem_id for c in batch}),
            "runs": runs, "elapsed_s": round(time.time() - t_start, 1),
        },
    }
    name = args.name or (f"ray-{key}x{max(counts)}.json" if args.device == "cuda" else "ray-cpu.json")
    (args.out / name).write_text(json.dumps(result, indent=1) + "\n")
    log(f"wrote {args.out / name}: {json.dumps(result['metrics'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
