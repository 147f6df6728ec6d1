"""Turn raw device results (kernels_cache/raw/) into the shipped dataset and benchmark JSON.

    python benchmarks/device/ingest.py [--pool .device_carry/pool.jsonl]

Reads measurements-<gpu>.jsonl[.gz] written by measure_dataset.py on a real GPU, the candidate
records (those already shipped in kernels_cache/shipped/, plus the pool file of candidates built
for a newer device run, when it exists), and the torch.compile
baselines; writes kernels_cache/shipped/ (Parquet, see workbench/dataset/SCHEMA.md) and
benchmarks/results/dataset-<gpu>.json. Only rows that came from the executor are used. Several raw
files of one GPU type are pooled; a candidate measured twice there keeps its newest row (a
re-measurement supersedes the first; `superseded_rows` counts them).
"""
from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from workbench import bins  # noqa: E402
from workbench.dataset import (CompileBaseline, load_compile_baselines, load_shipped,  # noqa: E402
                               speedup_over_compile, write_shipped)
from workbench.problems import list_problems  # noqa: E402
from workbench.records import Candidate, Measurement  # noqa: E402
from workbench.store import Store  # noqa: E402
from _common import commit as head_commit, read_jsonl  # noqa: E402

RAW = ROOT / "kernels_cache" / "raw"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pool", type=Path, default=ROOT / ".device_carry" / "pool.jsonl",
                    help="candidates JSONL of a run not yet shipped (optional)")
    ap.add_argument("--out", type=Path, default=ROOT / "kernels_cache" / "shipped")
    args = ap.parse_args()
    # The shipped candidates are the record of every earlier run's pool; the pool file adds the
    # candidates of a newer run (a clean checkout has none and re-ingests from the shipped ones).
    pool = {c.id: c for c in load_shipped(args.out).candidates} if (args.out / "kernels.parquet").exists() else {}
    if args.pool.exists():
        pool.update((c["id"], Candidate.from_dict(c)) for c in read_jsonl(args.pool))
    missing = {m["candidate_id"] for p in RAW.glob("measurements-*.jsonl*") for m in read_jsonl(p)} - set(pool)
    if missing:
        raise SystemExit(f"{len(missing)} measured candidates have no record in {args.out} or {args.pool} "
                         f"(e.g. {sorted(missing)[0]}); pass the pool file of the run that measured them")
    store_path = ROOT / "kernels_cache" / "ingest.sqlite"
    store_path.unlink(missing_ok=True)
    store = Store(store_path)
    store.put_problems(list_problems())
    commit = head_commit()
    # torch.compile baselines, GPU type -> problem -> the newest row without an error
    baselines_of: dict[str, dict[str, CompileBaseline]] = collections.defaultdict(dict)
    for (pid, gpu), b in sorted(load_compile_baselines(RAW).items()):
        baselines_of[gpu][pid] = b
    # Every raw file of a GPU type counts; a candidate measured more than once on it (e.g. re-measured
    # with a newer timing method) keeps its newest row, and the older ones are counted as superseded.
    latest: dict[str, dict[str, Measurement]] = {}
    superseded: dict[str, int] = {}
    for path in sorted(RAW.glob("measurements-*.jsonl*")):
        for m in (Measurement.from_dict(d) for d in read_jsonl(path)):
            rows_of = latest.setdefault(m.hardware_key, {})
            old = rows_of.get(m.candidate_id)
            if old is not None:
                superseded[m.hardware_key] = superseded.get(m.hardware_key, 0) + 1
            if old is None or m.measured_at >= old.measured_at:
                rows_of[m.candidate_id] = m
    for key, rows_of in sorted(latest.items()):
        ms = list(rows_of.values())
        store.put_candidates([pool[m.candidate_id] for m in ms])
        store.put_measurements(ms)
        ok = [m for m in ms if m.ok]
        counts = [0] * bins.N_BINS
        for m in ok:
            counts[m.bin] += 1
        metrics = {"rows": len(ms), "correct_rows": len(ok), "problems": len({m.problem_id for m in ok}),
                   "min_bin_share": min(counts) / len(ok), "bin_counts": counts,
                   "status_counts": {s: sum(m.status.value == s for m in ms) for s in sorted({m.status.value for m in ms})},
                   "rows_by_date": {d: sum(m.measured_at[:10] == d for m in ms)
                                    for d in sorted({m.measured_at[:10] for m in ms})},
                   "superseded_rows": superseded.get(key, 0)}
        rep = RAW / f"repeat-{key}.jsonl"
        if rep.exists():
            repeats = [r for r in read_jsonl(rep) if r["candidate_id"] in rows_of]  # rows_of: the shipped rows
            signed = [(r["speedup"] / rows_of[r["candidate_id"]].speedup - 1) * 100 for r in repeats
                      if r["status"] == "ok" and rows_of[r["candidate_id"]].ok]
            diffs = [abs(d) for d in signed]
            metrics["repro_diff_pct_median"] = statistics.median(diffs)
            # > 0: the repeat finds higher speedups than the shipped row (a systematic shift, not noise)
            metrics["repro_signed_pct_median"] = statistics.median(signed)
            metrics["repro_first_measured"] = sorted({rows_of[r["candidate_id"]].measured_at[:10] for r in repeats})
            metrics["repro_repeat_measured"] = sorted({r["measured_at"][:10] for r in repeats})
            metrics["repro_candidates"] = len(diffs)
        best: dict[str, float] = {}
        for m in ok:
            best[m.problem_id] = max(best.get(m.problem_id, 0.0), m.speedup)
        baselines = baselines_of.get(key, {})
        if baselines:
            metrics["compile_baseline_problems"] = len(baselines)
            metrics["compile_rows_by_date"] = dict(sorted(collections.Counter(
                b.measured_at[:10] for b in baselines.values()).items()))
        per_level = {}
        for level in (1, 2, 3):
            ids = [pid for pid in best if pid.startswith(f"L{level}/")]
            row = {"problems": len(ids), "best_speedup_over_eager_median": statistics.median(best[i] for i in ids)}
            with_baseline = [i for i in ids if i in baselines]
            over = [speedup_over_compile(best[i], baselines[i]) for i in with_baseline]
            if over:
                row["best_speedup_over_compile_median"] = statistics.median(over)
                row["compile_speedup_over_eager_median"] = statistics.median(
                    baselines[i].speedup_over_eager for i in with_baseline)
                row["compile_problems"] = len(over)
            per_level[f"level{level}"] = row
        metrics["per_level"] = per_level
        out = {"benchmark": "dataset", "gpu": key, "date": time.strftime("%Y-%m-%d"), "commit": commit,
               "metrics": metrics}
        (ROOT / "benchmarks" / "results" / f"dataset-{key}.json").write_text(json.dumps(out, indent=1) + "\n")
        print(json.dumps(out))
    write_shipped(store, args.out)
    for gpu, baselines in sorted(baselines_of.items()):  # one row per problem: the newest baseline
        (args.out / f"compile-{gpu}.jsonl").write_text(
            "".join(json.dumps(dataclasses.asdict(b)) + "\n" for b in baselines.values()))
    print(store.counts())
    store.close()
    store_path.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
