"""Where the judge's time goes on one GPU: the integrity benchmark's throughput batch (the
first `--triton` Triton zoo kernels, cold Triton cache) through the hardened executor, with
each session's parts as the timer reports them (`phases_s`: setup, lock, trials, warm_up,
alone, rounds, session, and the gate's parts under "gate") and its batch and rounds; `done_s`:
when each verdict came in.

    PYTHONPATH=. python benchmarks/device/judge_profile.py --out $OUT

Writes OUT/judge-profile.json: candidates per minute, the sum of each part over the batch,
and one row per kernel. Not a results file: a check for whoever works on the judge's speed.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT)]


def profile(n: int, workers: int, gpu: int = 0, options: dict | None = None) -> dict:
    from workbench.execution.executors import LocalGPUExecutor
    from workbench.problems import get_problem
    from workbench.zoo import zoo_kernels

    kernels = [k for k in zoo_kernels() if k.backend != "cuda"][:n]
    raws: dict[str, dict] = {}
    done_at: dict[str, float] = {}     # candidate id -> seconds from the start until its verdict
    cache = Path(tempfile.mkdtemp(prefix="wb_profile_cache_"))
    t0 = time.time()

    def on_raw(c, r) -> None:
        done_at[c.id] = time.time() - t0
        raws[c.id] = r
    with LocalGPUExecutor(gpus=[gpu], workers=workers, timeout_s=180, cache_root=cache, on_raw=on_raw,
                          options=options) as ex:
        futs = [(k, ex.submit(get_problem(k.problem_id), [k.candidate()])[0]) for k in kernels]
        got = [(k, f.result()) for k, f in futs]
        wall = time.time() - t0
    rows = []
    for k, m in got:
        raw = raws.get(k.candidate().id, {})
        rows.append({"kernel": k.name, "status": m.status.value, "speedup": m.speedup, "compile_s": m.compile_s,
                     "rounds": m.candidate_runs, "batch": raw.get("batch"), "phases_s": raw.get("phases_s"),
                     "gate_ms": raw.get("gate_ms"), "done_s": round(done_at.get(k.candidate().id, wall), 2)})
    parts: dict[str, float] = {}
    for r in rows:
        for name, s in (r["phases_s"] or {}).items():
            for sub, v in (s.items() if isinstance(s, dict) else [("", s)]):
                key = f"{name}.{sub}" if sub else name
                parts[key] = round(parts.get(key, 0.0) + v, 3)
    sessions = [r["phases_s"]["session"] for r in rows if r["phases_s"] and "session" in r["phases_s"]]
    return {"n": len(rows), "workers": workers, "options": options, "wall_s": round(wall, 1),
            "first_result_s": round(min(done_at.values()), 2) if done_at else None, "per_min": round(60 * len(rows) / wall, 1),
            "phase_sums_s": parts, "session_median_s": statistics.median(sessions) if sessions else None,
            "compile_s_sum": round(sum(r["compile_s"] or 0 for r in rows), 1),
            "statuses": {s: sum(r["status"] == s for r in rows) for s in {r["status"] for r in rows}},
            "rows": rows}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--triton", type=int, default=64, help="kernels (the throughput batch's size)")
    ap.add_argument("--workers", type=int, default=12)
    ap.add_argument("--option", action="append", default=[], metavar="NAME=JSON",
                    help="an executor option for this run (repeatable), e.g. compile_unlocked=true")
    ap.add_argument("--tag", default="", help="suffix of the output file's name")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    options = {k: json.loads(v) for k, v in (o.split("=", 1) for o in args.option)} or None
    res = profile(args.triton, args.workers, options=options)
    name = f"judge-profile{'-' + args.tag if args.tag else ''}.json"
    (args.out / name).write_text(json.dumps(res, indent=1, default=str))
    print(json.dumps({k: v for k, v in res.items() if k != "rows"}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
