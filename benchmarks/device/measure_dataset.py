"""Measure the kernel zoo and its mutation neighbourhoods on this machine's GPU.

Run on the device machine (torch, triton, numpy only; `PYTHONPATH=.`):

    python benchmarks/device/measure_dataset.py --out $OUT --neighbours 12 --budget-s 500

Writes, under --out:
  measurements-<gpu>.jsonl   one Measurement per candidate (written as each finishes)
  candidates-<gpu>.jsonl     the Candidate records (source, parent, origin)
  compile-<gpu>.jsonl        torch.compile baselines per problem (if --compile)
  summary-<gpu>.json         counts, throughput, hardware
Resumable: --resume FILE skips candidates already measured in that measurements file.
Stops submitting new work once --budget-s has passed, so the call ends inside its limit.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from workbench.execution.chunked import run_chunk  # noqa: E402
from workbench.execution.executors import probe_gpu  # noqa: E402
from workbench.execution.hardware import roofline_floor_ms  # noqa: E402
from workbench.execution.job import MeasureJob, MeasureOptions  # noqa: E402
from workbench.problems import list_problems  # noqa: E402
from workbench.zoo import zoo_candidates  # noqa: E402


def build_pool(neighbours: int, seed: int, problems: set[str] | None) -> list:
    from workbench.search.mutations import neighbourhood  # needs the app's packages; prefer --pool on a GPU box

    pool = []
    for c in zoo_candidates():
        if problems and c.problem_id not in problems:
            continue
        pool.append(c)
        if neighbours and c.backend == "triton":
            pool.extend(neighbourhood(c, neighbours, seed=seed))
    seen, out = set(), []
    for c in pool:
        if c.id not in seen:
            seen.add(c.id)
            out.append(c)
    return out


def compile_process(p, tmp: Path, timeout_s: float, env: dict) -> dict:
    """Time problem `p`'s torch.compile baseline in a fresh process
    (`workbench.execution.compile_baseline`, files in `tmp`); its result row, or an error row
    when the process times out or writes nothing. The result file of an earlier pass is removed
    first, so a process that dies without writing is never reported as that pass's row."""
    pj, oj = tmp / f"{p.name}.p.json", tmp / f"{p.name}.o.json"
    pj.write_text(json.dumps(p.to_dict()))
    oj.unlink(missing_ok=True)
    try:
        subprocess.run([sys.executable, "-m", "workbench.execution.compile_baseline", str(pj), str(oj)],
                       timeout=timeout_s, capture_output=True, env=env)
    except subprocess.TimeoutExpired:
        return {"problem_id": p.id, "error": f"timeout after {timeout_s:.0f} s"}
    return json.loads(oj.read_text()) if oj.exists() else {"problem_id": p.id, "error": "no result"}


def compile_baselines(todo, one, warm_workers: int, workers: int, write) -> list[dict]:
    """Time the torch.compile baselines of the problems `todo` with `one(problem) -> row`,
    handing every row to `write` as soon as it is done; returns the timed rows.

    With `warm_workers` > 0 every problem is first compiled in that many parallel processes
    (filling Inductor's on-disk caches); a problem that fails there is written as its error row
    with phase "cache fill" and not timed. The others are then timed `workers` at a time; their
    rows carry warm_cache, cold_compile_s (the compile of the first pass) and
    cold_compile_workers."""
    t0 = time.time()
    cold: dict[str, dict] = {}
    if warm_workers > 0:
        with ThreadPoolExecutor(warm_workers) as ex:
            for r in ex.map(one, todo):
                cold[r["problem_id"]] = r
        print(f"[compile] caches filled for {len(cold)} problems in {time.time() - t0:.0f} s "
              f"({sum('error' in r for r in cold.values())} errors)", flush=True)
        for r in cold.values():  # a failed compile is a result too (the loader skips it)
            if "error" in r:
                write(dict(r, phase="cache fill"))
        todo = [p for p in todo if "error" not in cold[p.id]]
    rows = []
    with ThreadPoolExecutor(workers) as ex:
        for r in ex.map(one, todo):
            if (first := cold.get(r["problem_id"])) is not None:
                r.update(warm_cache=True, cold_compile_s=first.get("compile_s"),
                         cold_compile_workers=warm_workers)
            write(r)
            rows.append(r)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--neighbours", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=12)
    ap.add_argument("--chunk", type=int, default=12)
    ap.add_argument("--budget-s", type=float, default=480)
    ap.add_argument("--timeout-s", type=float, default=90)
    ap.add_argument("--resume", type=Path, nargs="*", default=[], help="measurement files whose candidates are done")
    ap.add_argument("--pool", type=Path, default=None, help="candidates JSONL built ahead (skips building the pool here)")
    ap.add_argument("--problems", default="", help="comma-separated problem ids (default: all)")
    ap.add_argument("--compile", action="store_true", help="also time torch.compile baselines at the end")
    ap.add_argument("--compile-only", action="store_true")
    ap.add_argument("--compile-workers", type=int, default=4)
    ap.add_argument("--compile-timeout-s", type=float, default=240)
    ap.add_argument("--compile-warm-workers", type=int, default=0,
                    help="first compile every problem in this many parallel processes (filling "
                         "Inductor's on-disk caches; their times are kept as cold_compile_s), then "
                         "time them --compile-workers at a time; with --compile-workers 1 no "
                         "timing overlaps another process's GPU work")
    ap.add_argument("--repeat", type=int, default=0, help="re-measure this many ok candidates (reproducibility)")
    args = ap.parse_args()
    t_start = time.time()
    args.out.mkdir(parents=True, exist_ok=True)
    hw = probe_gpu(0)
    key = hw.key
    print(json.dumps(hw.to_dict()), flush=True)
    problems = {p.id: p for p in list_problems()}
    only = {s for s in args.problems.split(",") if s} or None
    meas_path = args.out / f"measurements-{key}.jsonl"
    done = set()
    for rpath in args.resume:
        if not rpath.exists():
            continue
        for line in rpath.read_text().splitlines():
            try:
                done.add(json.loads(line)["candidate_id"])
            except (json.JSONDecodeError, KeyError):
                pass
    lock = threading.Lock()
    counts: collections.Counter = collections.Counter()
    n_done = 0
    if not args.compile_only:
        if args.pool:
            from workbench.records import Candidate

            full = [Candidate.from_dict(json.loads(x)) for x in args.pool.read_text().splitlines() if x.strip()]
            full = [c for c in full if not only or c.problem_id in only]
        else:
            full = build_pool(args.neighbours, args.seed, only)
        pool = [c for c in full if c.id not in done]
        print(f"[dataset] {len(pool)} candidates to measure ({len(done)} already done)", flush=True)
        if not args.pool:  # a prebuilt pool is already the candidate list
            with open(args.out / f"candidates-{key}.jsonl", "a") as fh:
                for c in pool:
                    fh.write(json.dumps(c.to_dict()) + "\n")
        by_problem = collections.defaultdict(list)
        for c in pool:
            by_problem[c.problem_id].append(c)
        chunks = []
        for pid, cs in by_problem.items():
            cs.sort(key=lambda c: not c.origin.startswith("zoo:"))  # zoo kernels first
            for j, i in enumerate(range(0, len(cs), args.chunk)):
                chunks.append((j, pid, cs[i:i + args.chunk]))
        # Round-robin over problems, slow level-3 problems first within a round, so a budget
        # cut leaves every problem covered.
        chunks.sort(key=lambda t: (t[0], -int(t[1][1]), t[1]))
        chunks = [(pid, cs) for _, pid, cs in chunks]
        lock_dir = tempfile.mkdtemp(prefix="wb_locks_")
        out_fh = open(meas_path, "a")
        options = {"seeds": [0, 1], "timing": {"max_total_ms": 300.0, "max_runs": 50, "min_runs": 5},
                   "gpu_memory_fraction": 0.9 * 2 / args.workers}

        def on_result(m):
            nonlocal n_done
            with lock:
                out_fh.write(json.dumps(m.to_dict()) + "\n")
                out_fh.flush()
                counts[m.status.value] += 1
                n_done += 1
                if n_done % 100 == 0:
                    el = time.time() - t_start
                    print(f"[dataset] {n_done} done in {el:.0f} s ({60 * n_done / el:.0f}/min) {dict(counts)}", flush=True)

        def work(pc):
            pid, cs = pc
            if time.time() - t_start > args.budget_s:
                return
            p = problems[pid]
            job = MeasureJob(p, hw, device="cuda", gpu_index=0, timeout_s=args.timeout_s,
                             lock_path=os.path.join(lock_dir, "gpu0.lock"),
                             roofline_floor_ms=roofline_floor_ms(key, p.flops, p.bytes_moved),
                             options=MeasureOptions.from_dict(options))
            run_chunk(job, cs, on_result=on_result)

        with ThreadPoolExecutor(args.workers) as ex:
            list(ex.map(work, chunks))
        out_fh.close()
    el = time.time() - t_start
    print(f"[dataset] finished {n_done} in {el:.0f} s {dict(counts)}", flush=True)

    comp_rows = []
    if args.compile or args.compile_only:
        comp_path = args.out / f"compile-{key}.jsonl"
        tmp = Path(tempfile.mkdtemp(prefix="wb_compile_"))
        env = dict(os.environ)
        if args.compile_warm_workers > 0:
            # One compile thread per process: the processes already run in parallel, and a timing
            # process that hits the filled caches need not start Inductor's pool of compile
            # workers (about 11 s of a 15 s first compile on a 2-core CPU machine). The compiled
            # kernels are the same.
            env.update(TORCHINDUCTOR_COMPILE_THREADS="1", TORCHINDUCTOR_FX_GRAPH_CACHE="1",
                       TORCHINDUCTOR_AUTOTUNE_LOCAL_CACHE="1")

        def one(p):
            return compile_process(p, tmp, args.compile_timeout_s, env)

        todo = [p for p in problems.values() if not only or p.id in only]

        def write(r):
            r["hardware_key"] = key
            r["hardware_fingerprint"] = hw.fingerprint
            r["measured_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            with open(comp_path, "a") as fh:
                fh.write(json.dumps(r) + "\n")

        comp_rows = compile_baselines(todo, one, args.compile_warm_workers, args.compile_workers, write)
        print(f"[compile] {len(comp_rows)} problems, {sum('error' in r for r in comp_rows)} errors", flush=True)

    summary = {"hardware": hw.to_dict(), "counts": dict(counts), "measured": n_done, "elapsed_s": time.time() - t_start,
               "per_min": 60 * n_done / max(el, 1e-9), "compile_rows": len(comp_rows)}
    (args.out / f"summary-{key}.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
