"""Measure the landscapes of the held-out protocol's problems, sharded over device calls, then merge.

A landscape is every valid point of a problem's kernel family (workbench/families), optionally
with `--mutations` mutation-operator children per point (workbench/landscape). Candidates are
rendered here from the code at this commit, byte for byte the same in every process, so a call
measures only the ids of its shard and the merge re-renders them.

Measure (on the device machine; torch, triton and ray importable, PYTHONPATH=.):

    python benchmarks/landscape_bench.py --out $OUT --shard 0/6 --budget-s 480 --scaling 64

One call measures shard i of n: the candidates of all listed problems in a fixed order
(problem by problem in the order named, default the protocol's, held-out ones first with
`--heldout-first`; points in enumeration order), every n-th one
starting at i. Through the Ray executor on every GPU of the machine (`--gpus`, default all
visible); `--scaling N` first measures the shard's first N candidates on a 1-GPU Ray cluster and
then the same N on all GPUs, each cluster cold (fresh build cache), before the rest of the shard
on all GPUs: `ray_scaling` = the all-GPU rate / the 1-GPU rate on that same batch. New work stops
being waited for after --budget-s; what did not finish is measured by a later call with
`--resume` (the earlier shard files). `--resume-tree DIR` resumes from every shard file of this
machine's GPU type under DIR/<gpu>/ (at any depth, `.jsonl` or `.jsonl.gz`; the GPU type is nvidia-smi's
name of GPU 0), and `--scaling N` with `--scaling-once` measures the scaling
only where no `landscape-scaling-<gpu>-summary.json` lies under DIR/<gpu>/ yet, so the same
command continues a pass call after call once each call's files are copied there. `--ray-mode tasks` (the default, the mode the shipped
shards were measured in): Ray tasks of `--chunk` candidates with `--workers` processes each;
`--ray-mode actors`: one measuring actor per GPU with `--workers` processes (RayActorExecutor).
Writes under --out (the shard file and the summary before the last executor is closed, so a
call stopped while closing keeps them; until then the shard file is landscape-partial-shard<i>of<n>.jsonl):
  landscape-<gpu>-shard<i>of<n>.jsonl            one Measurement per candidate, as each finishes
  landscape-scaling-<gpu>-1gpu.jsonl             the 1-GPU scaling batch (repeat measurements)
  landscape-summary-<gpu>-shard<i>of<n>.json     settings, counts, rates, scaling, hardware

Merge (no GPU; every shard file of one GPU type, `.jsonl` or `.jsonl.gz`, from every call; calls
may name different problems, but must share max_points, mutations and seed):

    python benchmarks/landscape_bench.py --merge DIR1 DIR2 ... --gpu h100 --ship kernels_cache/landscapes/h100

writes the shipped landscape (the dataset's Parquet rows plus points and edges, zstd) to --ship
and benchmarks/results/dataset-landscape-<gpu>.json: metrics problems and heldout_problems (landscapes
measured whole; `*_listed`: named by any call), correct_rows (all), and over the whole landscapes
points_per_problem_median, within2pct_share_median, speed_clusters_median,
random_order_budget_to_best_median (held-out problems only; a fraction of a 64-measurement
budget), ray_gpus, ray_scaling, and each landscape's structure (workbench/landscape/structure.py);
a candidate measured by more than one call is a repeat: the last row is shipped, and each later
measurement paired with the first gives remeasured_points (the number of such pairs, not of
distinct candidates), remeasured_within_tie_share and remeasured_abs_log_speedup_median (the
whole `repeatability` under setup.remeasured).
A merge with missing candidates reports them (`unmeasured`) and writes the results file only
with --allow-partial (never into benchmarks/results: then only under --ship).

Smoke test on a CPU machine (Triton interpreter, no Ray: the local CPU executor), never a
results file:

    python benchmarks/landscape_bench.py --cpu --problems L1/02_relu --max-points 6 --out /tmp/ls
    python benchmarks/landscape_bench.py --cpu --merge /tmp/ls --gpu cpu --ship /tmp/ls/ship
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # the device machine has no network

from workbench.compose import make_executor  # noqa: E402
from workbench.errors import ConfigError  # noqa: E402
from workbench.families import get_family  # noqa: E402
from workbench.landscape import enumerate_landscape, load_protocol, structure, write_landscapes  # noqa: E402
from workbench.landscape.structure import repeatability  # noqa: E402
from workbench.problems import get_problem  # noqa: E402
from workbench.records import Measurement  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import commit, read_jsonl, wait_measurements  # noqa: E402

RESULTS_DIR = Path(__file__).parent / "results"
CPU_OPTIONS = {"seeds": [0, 1], "cpu_timing": {"max_total_ms": 100, "max_runs": 5}}


def log(msg: str) -> None:
    print(f"[landscape {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def subset(points: list, max_points: int | None) -> list:
    """Every k-th point so that at most `max_points` remain (all when None)."""
    if not max_points or len(points) <= max_points:
        return points
    step = len(points) / max_points
    return [points[int(i * step)] for i in range(max_points)]


def _family(pid: str, max_points: int | None):
    """The problem's family, restricted to `subset` of its points when `max_points` is set."""
    fam = get_family(pid)
    if not max_points:
        return fam
    keep = set(subset(fam.points(), max_points))
    return dataclasses.replace(
        fam, check_fn=lambda d, f=fam, k=keep: f.check_fn(d) or (None if tuple(d.values()) in k else "not in the subset"))


def landscapes(problem_ids: list[str], max_points: int | None, mutations: int, seed: int) -> dict:
    """problem id -> Landscape, for the settings a shard and its merge share."""
    return {pid: enumerate_landscape(_family(pid, max_points), mutations=mutations, seed=seed) for pid in problem_ids}


RENDER_CHUNK = 128  # points per rendering job of shard_candidates


def _render(job: tuple[str, int | None, list[int]]) -> list:
    """The candidates of one problem's points at these indices of its family's `points()` order
    (`_family(pid, max_points)`); one job of shard_candidates, run in a worker process."""
    pid, max_points, idx = job
    fam = _family(pid, max_points)
    pts = fam.points()
    return [fam.candidate(pts[k]) for k in idx]


def shard_candidates(problem_ids: list[str], max_points: int | None, mutations: int, seed: int, i: int, n: int,
                     procs: int | None = None) -> list:
    """Shard i of n: every n-th candidate, from i, of the landscapes' candidates in order (problem
    by problem, each landscape's `candidates` order). Without mutation children only the shard's
    points are rendered, in `procs` processes (default: one per core; the result is the same
    list whatever `procs` is); with them the landscapes are enumerated whole, in this process."""
    if mutations:
        order = [c for land in landscapes(problem_ids, max_points, mutations, seed).values() for c in land.candidates]
        return order[i::n]
    flat = [(pid, k) for pid in problem_ids for k in range(len(_family(pid, max_points).points()))][i::n]
    jobs: list[tuple[str, int | None, list[int]]] = []
    for pid, k in flat:
        if jobs and jobs[-1][0] == pid and len(jobs[-1][2]) < RENDER_CHUNK:
            jobs[-1][2].append(k)
        else:
            jobs.append((pid, max_points, [k]))
    procs = min(len(jobs), (os.cpu_count() or 1) if procs is None else procs)
    if procs <= 1:
        return [c for job in jobs for c in _render(job)]
    # fork: the workers inherit this module as loaded (a script, or a test's import by path).
    with ProcessPoolExecutor(procs, mp_context=multiprocessing.get_context("fork")) as pool:
        return [c for cands in pool.map(_render, jobs) for c in cands]


def _executor(args, gpus: int, chunk: int | None = None):
    """--cpu: the CPU interpreter; --local: the local GPU executor on GPUs 0..gpus-1; else a local
    Ray cluster of `gpus` GPUs, `chunk` candidates per task (default --chunk)."""
    if args.cpu:
        return make_executor("cpu", workers=args.workers, options=CPU_OPTIONS)
    budgets = dict(timeout_s=args.timeout_s, run_timeout_s=args.run_timeout_s,
                   cache_root=tempfile.mkdtemp(prefix="wb_landscape_cache_"))
    # Explicit either way: this benchmark's runs without the flag keep the GPU lock over compiles.
    budgets["options"] = {"compile_unlocked": bool(args.compile_unlocked)}
    if args.local:
        return make_executor("cuda", gpus=list(range(gpus)), workers=args.workers, **budgets)
    if args.ray_mode == "actors":
        return make_executor("ray", ray_mode="actors", num_gpus=gpus, workers_per_gpu=args.workers, **budgets)
    return make_executor("ray", ray_mode="tasks", num_gpus=gpus, chunk_size=chunk or args.chunk,
                         workers_per_task=args.workers, max_retries=2, **budgets)


def measure_batch(cands: list, args, gpus: int, deadline: float, path: Path, chunk: int | None = None,
                  keep_open: bool = False) -> dict:
    """Measure `cands` on a fresh executor of `gpus` GPUs (CPU workers with --cpu), appending each
    Measurement to `path`; stops waiting at `deadline` (epoch seconds). The executor is closed
    before returning, or, with `keep_open`, returned under "executor" for the caller to close
    once it has written its files (closing cancels what is still queued and can take a while)."""
    t_init = time.monotonic()
    ex = _executor(args, gpus, chunk)
    startup = time.monotonic() - t_init
    by_pid: dict[str, list] = {}
    for c in cands:
        by_pid.setdefault(c.problem_id, []).append(c)
    t0 = time.monotonic()
    futures = []
    for pid, cs in by_pid.items():
        futures += ex.submit(get_problem(pid), cs)

    def progress(n: int, new: int, seconds: float) -> None:  # about every 50 measurements
        if n % 50 < new:
            log(f"{gpus} GPU(s): {n}/{len(cands)} in {seconds:.0f} s")

    done, el, cut = wait_measurements(futures, deadline, path, t0, mode="a", progress=progress)
    if not keep_open:
        ex.close()
    hw = getattr(ex, "hardware", None)
    return {"measured": len(done), "of": len(cands), "elapsed_s": round(el, 2), "startup_s": round(startup, 2),
            "per_min": round(60 * len(done) / el, 2) if el > 0 else None, "cut_by_budget": cut,
            "hardware": hw.to_dict() if hw is not None else None, "ids": list(done)} | (
                {"executor": ex} if keep_open else {})


def _machine_gpu_key(cpu: bool) -> str:
    """The GPU type of this machine's first GPU ("cpu" for the CPU smoke test), from nvidia-smi:
    this process does not initialise CUDA (it forks its renderers, and holds no context)."""
    if cpu:
        return "cpu"
    from workbench.execution.hardware import smi_gpu_key

    key = smi_gpu_key(0)
    if key is None:
        raise SystemExit("--resume-tree needs nvidia-smi to name this machine's GPU type (whose shards to resume)")
    return key


def resume_from_tree(args) -> None:
    """`--resume-tree DIR`: add DIR/<gpu>'s shard files to args.resume; with `--scaling-once`,
    drop the scaling when that folder already holds a scaling summary."""
    key = _machine_gpu_key(args.cpu)
    root = args.resume_tree / key
    found = sorted(p for p in root.rglob(f"landscape-{key}-shard*.jsonl*")
                   if p.name.endswith((".jsonl", ".jsonl.gz")))
    args.resume = list(args.resume) + found
    scaled = sorted(root.rglob(f"landscape-scaling-{key}-summary.json"))
    log(f"resume tree {root}: {len(found)} shard file(s)" + (f", scaling already measured ({scaled[0]})" if scaled else ""))
    if args.scaling_once and scaled:
        args.scaling = 0


def run_shard(args) -> int:
    t_start = time.time()
    if args.resume_tree is not None:
        resume_from_tree(args)
    protocol = load_protocol(args.protocol)
    pids = [p for p in args.problems.split(",") if p] or list(protocol.problems)
    if args.heldout_first:   # a pass that is cut short has the headline landscapes whole first
        pids = [p for p in pids if protocol.is_heldout(p)] + [p for p in pids if not protocol.is_heldout(p)]
    i, n = (int(x) for x in args.shard.split("/"))
    if not 0 <= i < n:
        raise ConfigError(f"--shard {args.shard}: need 0 <= i < n")
    cands = shard_candidates(pids, args.max_points, args.mutations, args.seed, i, n)
    done: set[str] = set()
    for p in args.resume:
        done.update(row["candidate_id"] for row in read_jsonl(p))
    todo = [c for c in cands if c.id not in done]
    log(f"shard {i}/{n}: {len(cands)} candidates over {len(pids)} problems, {len(todo)} to measure")
    args.out.mkdir(parents=True, exist_ok=True)
    gpus = 1 if args.cpu else (args.gpus or _visible_gpus())
    key = "cpu" if args.cpu else None
    deadline = t_start + args.budget_s
    scaling, n_scaled = None, 0
    tmp_path = args.out / f"landscape-partial-shard{i}of{n}.jsonl"
    if args.scaling and args.local:
        raise SystemExit("--scaling measures Ray's scaling: it needs the Ray executor (drop --local)")
    if args.scaling and not args.cpu and gpus < 2:
        # 1 GPU against 1 is no scaling, and its summary would stop --scaling-once measuring it
        # on a later call of several GPUs.
        log(f"{gpus} GPU visible: no Ray scaling measured (it needs at least 2)")
        args.scaling = 0
    if args.scaling and todo and not args.cpu:
        batch = todo[: args.scaling]
        chunk = args.scaling_chunk or args.chunk   # both clusters: the same chunks
        one = measure_batch(batch, args, 1, deadline, args.out / "landscape-scaling-1gpu.jsonl", chunk)
        key = one["hardware"]["key"]
        (args.out / "landscape-scaling-1gpu.jsonl").rename(args.out / f"landscape-scaling-{key}-1gpu.jsonl")
        batch = [c for c in batch if c.id in set(one["ids"])]
        many = measure_batch(batch, args, gpus, deadline, tmp_path, chunk)
        scaling = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "commit": commit(),
                   "ray_mode": args.ray_mode, "chunk": chunk, "workers_per_task": args.workers, "batch": len(batch), "gpus": gpus,
                   "per_min_1gpu": one["per_min"], "per_min_ngpu": many["per_min"],
                   "ray_scaling": round(many["per_min"] / one["per_min"], 3) if one["per_min"] and many["per_min"] else None,
                   "cache": "cold: each cluster starts with a fresh, empty build cache",
                   "runs": {"1gpu": {k: v for k, v in one.items() if k != "ids"},
                            f"{gpus}gpu": {k: v for k, v in many.items() if k != "ids"}}}
        n_scaled = many["measured"]
        todo = [c for c in todo if c.id not in set(many["ids"])]
        # Written now, not only in the summary: a run cut short by its machine keeps its scaling.
        (args.out / f"landscape-scaling-{key}-summary.json").write_text(json.dumps(scaling, indent=1) + "\n")
        log(f"ray scaling on {len(batch)} candidates: {scaling['ray_scaling']} ({gpus} GPUs vs 1)")
    # The last batch's executor is closed only after the shard file and the summary are written: a
    # call stopped while the executor closes (cancelling a long queue) keeps both.
    rest = (measure_batch(todo, args, gpus, deadline, tmp_path, keep_open=True) if todo
            else {"measured": 0, "ids": [], "hardware": None})
    open_ex = rest.pop("executor", None)
    key = key or (rest["hardware"] or {}).get("key") or "gpu"
    final = args.out / f"landscape-{key}-shard{i}of{n}.jsonl"
    if tmp_path.exists():
        tmp_path.rename(final)
    summary = {"benchmark": "landscape-shard", "gpu": key, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "commit": commit(), "shard": [i, n], "problems": pids, "max_points": args.max_points,
               "mutations": args.mutations, "seed": args.seed, "protocol": protocol.describe(),
               "candidates": len(cands), "already_done": len(done & {c.id for c in cands}),
               "measured": rest["measured"] + n_scaled,
               "rest": {k: v for k, v in rest.items() if k != "ids"}, "scaling": scaling, "gpus": gpus,
               "executor": ("cpu interpreter" if args.cpu else f"local gpu executor, {args.workers} workers" if args.local
                            else f"ray actors, {args.workers} workers per GPU" if args.ray_mode == "actors"
                            else f"ray, chunk {args.chunk}, {args.workers} workers per task")
                           + (", compiles outside the GPU lock (compile_unlocked)" if args.compile_unlocked else ""),
               "elapsed_s": round(time.time() - t_start, 1)}
    (args.out / f"landscape-summary-{key}-shard{i}of{n}.json").write_text(json.dumps(summary, indent=1) + "\n")
    log(f"wrote {final.name}: {summary['measured']} measured in {summary['elapsed_s']} s")
    if open_ex is not None:
        t_close = time.monotonic()
        open_ex.close()
        log(f"executor closed in {time.monotonic() - t_close:.0f} s")
    return 0


def _visible_gpus() -> int:
    import torch

    return torch.cuda.device_count()


def pilot(args) -> int:
    """`--pilot DIR...`: benchmarks/results/landscape-pilot-<gpu>.json from shard files measured
    before the exhaustive run (a sample of every family): how many points were measured, how
    many were correct, and the rate. No speed is summarised (the held-out problems are in it)."""
    import collections

    summaries = [json.loads(p.read_text()) for d in args.pilot for p in sorted(Path(d).glob(f"landscape-summary-{args.gpu}-*.json"))]
    rows = [json.loads(line) for d in args.pilot for p in sorted(Path(d).glob(f"landscape-{args.gpu}-shard*.jsonl"))
            for line in p.read_text().splitlines() if line.strip()]
    if not summaries or not rows:
        raise SystemExit(f"no landscape-{args.gpu} shard files under {', '.join(map(str, args.pilot))}")
    hw = json.loads(rows[0]["hardware_json"]) if isinstance(rows[0]["hardware_json"], str) else rows[0]["hardware_json"]
    statuses = collections.Counter(r["status"] for r in rows)
    rates = [s["rest"]["per_min"] for s in summaries if s["rest"].get("per_min")]
    doc = {"benchmark": "landscape-pilot", "gpu": hw.get("name", args.gpu), "date": max(s["date"] for s in summaries),
           "commit": summaries[0]["commit"], "shards": [s["shard"] for s in summaries],
           "executor": sorted({s["executor"] for s in summaries}),
           "source": [str(p) for d in args.pilot for p in sorted(Path(d).glob(f"landscape-{args.gpu}-shard*.jsonl"))],
           "metrics": {"points_measured": len(rows), "problems": len({r["problem_id"] for r in rows}),
                       "correct": statuses.get("ok", 0), "correct_share": round(statuses.get("ok", 0) / len(rows), 4),
                       "per_min_cold": min(rates) if rates else None, "statuses": dict(statuses)}}
    out = RESULTS_DIR / f"landscape-pilot-{args.gpu}.json"
    out.write_text(json.dumps(doc, indent=1) + "\n")
    log(f"wrote {out}: {doc['metrics']}")
    return 0


def merge(args) -> int:
    summaries = [json.loads(p.read_text()) for d in args.merge for p in sorted(Path(d).glob(f"landscape-summary-{args.gpu}-*.json"))]
    if not summaries:
        raise SystemExit(f"no landscape-summary-{args.gpu}-*.json under {', '.join(map(str, args.merge))}")
    # Calls may list different problems (candidate ids are content hashes, so a point measured by
    # any call is the same point); what shapes a landscape must agree.
    settings = {(s["max_points"], s["mutations"], s["seed"]) for s in summaries}
    if len(settings) != 1:
        raise SystemExit(f"the shards were measured with different settings: {sorted(settings)}")
    max_points, mutations, seed = settings.pop()
    order = load_protocol(args.protocol).problems
    named = {pid for s in summaries for pid in s["problems"]}
    pids = tuple(p for p in order if p in named) + tuple(sorted(named - set(order)))
    ms: dict[str, Measurement] = {}
    first: dict[str, Measurement] = {}
    again: list[tuple[Measurement, Measurement]] = []  # (first, re-measurement) of one id by two calls
    for d in args.merge:
        for p in sorted(Path(d).glob(f"landscape-{args.gpu}-shard*.jsonl*")):
            for row in read_jsonl(p):
                m = Measurement.from_dict(row)
                if m.candidate_id in first:
                    again.append((first[m.candidate_id], m))
                else:
                    first[m.candidate_id] = m
                ms[m.candidate_id] = m  # a later call's re-measurement of the same id wins
    lands = landscapes(list(pids), max_points, mutations, seed)
    want = {c.id for land in lands.values() for c in land.candidates}
    unknown = set(ms) - want
    if unknown:
        raise SystemExit(f"{len(unknown)} measured ids are not candidates of these landscapes at this commit "
                         "(the templates changed since the shards ran?); merge at the shards' commit")
    missing = want - set(ms)
    protocol = load_protocol(args.protocol)
    per = {}
    for pid, land in lands.items():
        rows = [ms[c.id] for c in land.candidates if c.id in ms]
        per[pid] = structure(rows, n_points=len(land.candidates), tie_rel=protocol.tie_rel) | {
            "heldout": protocol.is_heldout(pid), "unmeasured": len(land.candidates) - len(rows)}
    # Structure is read from whole landscapes only: a partly measured one has no known best.
    whole = [s for s in per.values() if s["unmeasured"] == 0 and s["points"]]
    held = [s for s in whole if s["heldout"]]
    scal = [s["scaling"] for s in summaries if s.get("scaling")]
    for d in args.merge:  # a call cut before its summary still wrote its scaling
        for p in sorted(Path(d).glob(f"landscape-scaling-{args.gpu}-summary.json")):
            extra = json.loads(p.read_text())
            if not any(extra.get("date") == x.get("date") for x in scal):
                scal.append(extra)

    def med(key, rows):
        xs = [r[key] for r in rows if r.get(key) is not None]
        return statistics.median(xs) if xs else None

    metrics = {"problems": len(whole), "heldout_problems": len(held),
               "problems_listed": len(per), "heldout_problems_listed": sum(s["heldout"] for s in per.values()),
               "correct_rows": sum(s["correct"] for s in per.values()),
               "points_per_problem_median": med("points", whole),
               "within2pct_share_median": med("within_tie_share", whole),
               "speed_clusters_median": med("speed_clusters", whole),
               "random_order_budget_to_best_median": med("random_order_budget_to_best", held),
               "ray_gpus": max((s["gpus"] for s in summaries if s["executor"].startswith("ray")), default=None),
               "ray_scaling": max(scal, key=lambda x: x.get("date", ""))["ray_scaling"] if scal else None}
    rep = repeatability([(a, b) for a, b in again if a.candidate_id in want], tie_rel=protocol.tie_rel)
    metrics |= {"remeasured_points": rep["pairs"], "remeasured_within_tie_share": rep["within_tie_share"],
                "remeasured_abs_log_speedup_median": rep["abs_log_speedup_median"]}
    problems = [get_problem(pid) for pid in pids]
    args.ship.mkdir(parents=True, exist_ok=True)
    counts = write_landscapes(args.ship, lands.values(), problems, [m for m in ms.values() if m.candidate_id in want])
    doc = {"benchmark": "dataset-landscape", "gpu": args.gpu, "date": time.strftime("%Y-%m-%d"), "commit": commit(),
           "metrics": metrics,
           "setup": {"protocol": protocol.describe(), "max_points": max_points, "mutations": mutations, "seed": seed,
                     "tie_rel": protocol.tie_rel, "shards": [s["shard"] for s in summaries],
                     "shard_commits": sorted({s["commit"] for s in summaries}), "scaling": scal,
                     "unmeasured": len(missing), "remeasured": rep, "shipped": counts, "ship_dir": str(args.ship),
                     "definitions": structure.__module__ + " (module docstring)"},
           "per_problem": per}
    name = f"dataset-landscape-{args.gpu}.json"
    complete = not missing and not args.cpu and max_points is None
    if missing and not args.allow_partial:
        raise SystemExit(f"{len(missing)} candidates are unmeasured; measure them (--resume) or pass --allow-partial")
    paths = [args.ship / name] + ([RESULTS_DIR / name] if complete else [])
    for p in paths:
        p.write_text(json.dumps(doc, indent=1, default=float) + "\n")
    log(f"wrote {', '.join(map(str, paths))}: {json.dumps(metrics)}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, help="where a shard's files go")
    ap.add_argument("--cpu", action="store_true", help="smoke test: Triton interpreter on the CPU executor")
    ap.add_argument("--problems", default="", help="comma-separated ids (default: the protocol's problems)")
    ap.add_argument("--protocol", type=Path, default=None, help="protocol TOML (default: the committed one)")
    ap.add_argument("--heldout-first", action="store_true",
                    help="measure the held-out problems before the others (otherwise the order named)")
    ap.add_argument("--shard", default="0/1", help="i/n: this call measures every n-th candidate from i")
    ap.add_argument("--max-points", type=int, default=None, help="at most this many points per problem (smoke)")
    ap.add_argument("--mutations", type=int, default=0, help="mutation children per point (default 0)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--gpus", type=int, default=None, help="GPUs of the Ray cluster (default: all visible)")
    ap.add_argument("--local", action="store_true",
                    help="the local GPU executor instead of Ray (a machine without Ray; same rows and provenance)")
    ap.add_argument("--scaling", type=int, default=0, metavar="N", help="measure N candidates on 1 GPU, then all")
    ap.add_argument("--ray-mode", choices=("tasks", "actors"), default="tasks",
                    help="tasks: Ray tasks of --chunk candidates, --workers processes each; actors: one "
                         "measuring actor per GPU with --workers processes (RayActorExecutor)")
    ap.add_argument("--chunk", type=int, default=8, help="candidates per Ray task")
    ap.add_argument("--scaling-chunk", type=int, default=None,
                    help="candidates per Ray task of the --scaling batch (default --chunk): a batch of at least "
                         "GPUs x chunk keeps every GPU busy")
    ap.add_argument("--workers", type=int, default=4, help="worker processes per Ray task (CPU: executor workers)")
    ap.add_argument("--compile-unlocked", action="store_true",
                    help="workers step out of their shared GPU hold while Triton compiles (MeasureOptions."
                         "compile_unlocked); timed regions unchanged")
    ap.add_argument("--timeout-s", type=float, default=90.0)
    ap.add_argument("--run-timeout-s", type=float, default=60.0)
    ap.add_argument("--budget-s", type=float, default=480.0, help="stop waiting after this many seconds")
    ap.add_argument("--resume", type=Path, nargs="*", default=[], help="shard files whose candidates are done")
    ap.add_argument("--resume-tree", type=Path, default=None, metavar="DIR",
                    help="also resume from every shard file of this machine's GPU type under DIR/<gpu>/")
    ap.add_argument("--scaling-once", action="store_true",
                    help="with --resume-tree: skip --scaling when DIR/<gpu>/ already holds a scaling summary")
    ap.add_argument("--merge", type=Path, nargs="*", default=None, help="merge the shard files in these folders")
    ap.add_argument("--gpu", default="h100", help="GPU type key of the shards to merge")
    ap.add_argument("--ship", type=Path, default=None, help="merge: the shipped landscape folder")
    ap.add_argument("--pilot", type=Path, nargs="*", default=None,
                    help="write landscape-pilot-<gpu>.json (points, correct share, rate) from these shard folders")
    ap.add_argument("--allow-partial", action="store_true", help="merge even when candidates are unmeasured")
    args = ap.parse_args(argv)
    if args.pilot is not None:
        return pilot(args)
    if args.merge is not None:
        if args.ship is None:
            ap.error("--merge needs --ship DIR")
        return merge(args)
    if args.out is None:
        ap.error("--out is required to measure a shard")
    if args.scaling_once and args.resume_tree is None:
        ap.error("--scaling-once reads the scaling summaries under --resume-tree DIR: name it")
    if args.cpu:
        args.workers = min(args.workers, 2)
    return run_shard(args)


if __name__ == "__main__":
    sys.exit(main())
