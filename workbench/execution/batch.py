"""Measure a manifest of candidates on this machine's GPUs (or CPU), resumably.

    python -m workbench.execution.batch --manifest IN.jsonl --out OUT.jsonl [--gpus 0,1] [--workers 12]

Each manifest line is {"problem": Problem.to_dict(), "candidate": Candidate.to_dict()}.
Each result line is a Measurement.to_dict(), written and flushed as soon as it is known, so
a killed batch loses nothing already measured and a rerun skips what OUT already holds.
With --repeat each candidate is measured twice, in separate worker processes, and the second
result goes to OUT with the suffix .repeat.jsonl (for reproducibility numbers).
"""
from __future__ import annotations

import argparse
import collections
import json
import sys
import threading
import time
from concurrent.futures import as_completed
from pathlib import Path

from workbench.execution.executors import CPUExecutor, LocalGPUExecutor
from workbench.records import Candidate, Problem


def _done_ids(path: Path) -> set[str]:
    if not path.exists():
        return set()
    ids = set()
    for line in path.read_text().splitlines():
        try:
            ids.add(json.loads(line)["candidate_id"])
        except (json.JSONDecodeError, KeyError):
            continue  # a line cut by a kill: measured again
    return ids


def run_batch(manifest: Path, out: Path, gpus: list[int] | None, workers: int | None,
              timeout_s: float, limit: int | None = None, options: dict | None = None) -> collections.Counter:
    rows = []
    for n, line in enumerate(manifest.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
            rows.append((Problem.from_dict(r["problem"]), Candidate.from_dict(r["candidate"])))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
            print(f"[batch] {manifest}:{n}: skipped, not a manifest line ({type(e).__name__}: {e}); "
                  'expected {"problem": Problem.to_dict(), "candidate": Candidate.to_dict()}',
                  file=sys.stderr, flush=True)
    done = _done_ids(out)
    todo = [(p, c) for p, c in rows if c.id not in done]
    if limit:
        todo = todo[:limit]
    print(f"[batch] {len(rows)} in manifest, {len(done)} already in {out}, {len(todo)} to measure",
          file=sys.stderr, flush=True)
    ex = (CPUExecutor(workers=workers or 2, options=options) if gpus is None else
          LocalGPUExecutor(gpus=gpus, workers=workers, timeout_s=timeout_s, options=options))
    counts: collections.Counter = collections.Counter()
    lock = threading.Lock()
    t0 = time.time()
    if out.exists() and out.stat().st_size and not out.read_bytes().endswith(b"\n"):
        with open(out, "a") as fh:  # a line cut by a kill: end it so new lines stay whole
            fh.write("\n")
    with ex, open(out, "a") as fh:
        futures = {}
        for p, c in todo:
            futures[ex.submit(p, [c])[0]] = c
        for i, f in enumerate(as_completed(futures), 1):
            m = f.result()
            with lock:
                fh.write(json.dumps(m.to_dict()) + "\n")
                fh.flush()
            counts[m.status.value] += 1
            if i % 25 == 0 or i == len(futures):
                rate = 60 * i / max(time.time() - t0, 1e-9)
                print(f"[batch] {i}/{len(futures)} {dict(counts)} {rate:.1f}/min", file=sys.stderr, flush=True)
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--manifest", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--gpus", default="0", help="comma-separated GPU indices (default 0)")
    ap.add_argument("--cpu", action="store_true", help="run on the CPU with the Triton interpreter")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per candidate (CUDA C++: twice)")
    ap.add_argument("--limit", type=int, default=None, help="measure at most this many")
    ap.add_argument("--repeat", action="store_true", help="also measure each candidate a second time")
    args = ap.parse_args(argv)
    gpus = None if args.cpu else [int(g) for g in args.gpus.split(",") if g.strip()]
    counts = run_batch(args.manifest, args.out, gpus, args.workers, args.timeout, args.limit)
    if args.repeat:
        rep = args.out.with_suffix(".repeat.jsonl")
        run_batch(args.manifest, rep, gpus, args.workers, args.timeout, args.limit)
    print(json.dumps({"counts": dict(counts)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
