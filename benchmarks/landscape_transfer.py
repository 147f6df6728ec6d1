"""One GPU's measured landscapes as the forecast for another GPU's (no GPU needed).

For every problem of the protocol whose landscape is measured whole on both GPUs, the source
GPU's recorded speedups order the target's candidates (workbench/landscape/transfer.py has the
per-problem metrics and their definitions), beside a uniformly random order on the same target
landscape: the control. A forecaster that needs a measurement of the target GPU should at least
beat "measure in the order another GPU found".

    python benchmarks/landscape_transfer.py --source kernels_cache/landscapes/h200 --source-gpu h200 \\
        --target kernels_cache/landscapes/h100 --target-gpu h100

Metrics, over the problems whole on both GPUs (`all`) and over the held-out ones among them
(`heldout`): `problems`; the median of each per-problem metric (`<metric>_median`);
`source_order_gain_mean` with `source_order_gain_mean_ci` (95% percentile bootstrap over
problems); `source_order_sooner_share` (problems where the source's order reaches a target
candidate within the tie of the target's best sooner than a random order's median) and
`source_order_later_share`.

Writes benchmarks/results/landscape-transfer-from-<source gpu>-<target gpu>.json only when every
protocol problem is whole on both GPUs (a partial comparison would be read as the whole one);
otherwise only under --out.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import commit, write_results  # noqa: E402
from search_control import bootstrap_mean_ci  # noqa: E402
from workbench.dataset.shipped import load_shipped  # noqa: E402
from workbench.landscape import load_protocol, read_landscapes  # noqa: E402
from workbench.landscape.transfer import transfer  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
METRICS = ("spearman", "source_best_on_target", "source_top4_on_target", "source_order_budget_to_best",
           "random_order_budget_to_best", "source_order_gain")


def whole_speedups(directory: Path, gpu: str) -> tuple[dict[str, list[str]], dict[str, dict[str, float | None]],
                                                       dict[str, str]]:
    """(candidate ids by problem: points then mutation children; speedup by candidate id by
    problem, None for a candidate measured but not correct; "measured/candidates" for each
    problem that is not measured whole on `gpu`)."""
    lands = read_landscapes(directory)
    rows = {m.candidate_id: m for m in load_shipped(directory).measurements if m.hardware_key == gpu}
    ids, speed, partial = {}, {}, {}
    for pid, land in lands.items():
        cs = list(dict.fromkeys(land.point_ids + [child for _, child, _ in land.edges]))
        got = [c for c in cs if c in rows]
        if len(got) < len(cs):
            partial[pid] = f"{len(got)}/{len(cs)}"
            continue
        ids[pid] = cs
        speed[pid] = {c: (rows[c].speedup if rows[c].ok else None) for c in cs}
    return ids, speed, partial


def summarize(per: dict[str, dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"problems": len(per)}
    for k in METRICS:
        xs = [r[k] for r in per.values() if r[k] is not None]
        out[f"{k}_median"] = statistics.median(xs) if xs else None
    gain = [r["source_order_gain"] for r in per.values()]
    out["source_order_gain_mean"] = statistics.fmean(gain) if gain else None
    out["source_order_gain_mean_ci"] = bootstrap_mean_ci(gain)
    out["source_order_sooner_share"] = sum(g > 0 for g in gain) / len(gain) if gain else None
    out["source_order_later_share"] = sum(g < 0 for g in gain) / len(gain) if gain else None
    return out


def run(args) -> dict[str, Any]:
    protocol = load_protocol(args.protocol)
    s_ids, s_speed, s_partial = whole_speedups(args.source, args.source_gpu)
    t_ids, t_speed, t_partial = whole_speedups(args.target, args.target_gpu)
    per: dict[str, dict[str, Any]] = {}
    mismatch = {}
    for pid in protocol.problems:
        if pid not in s_ids or pid not in t_ids:
            continue
        if s_ids[pid] != t_ids[pid]:   # rendered at different commits: not the same candidates
            mismatch[pid] = f"{len(set(s_ids[pid]) ^ set(t_ids[pid]))} candidates differ"
            continue
        per[pid] = transfer(t_ids[pid], s_speed[pid], t_speed[pid], tie_rel=protocol.tie_rel) | {
            "heldout": protocol.is_heldout(pid)}
    if not per:
        raise SystemExit(f"no problem is measured whole on both GPUs (source partial: {s_partial}; "
                         f"target partial: {t_partial}; candidates differ: {mismatch})")
    held = {p: r for p, r in per.items() if r["heldout"]}
    return {"benchmark": f"landscape-transfer-from-{args.source_gpu}", "gpu": args.target_gpu,
            "date": time.strftime("%Y-%m-%d"), "commit": commit(),
            "metrics": {"all": summarize(per), "heldout": summarize(held)},
            "setup": {"source": str(args.source), "source_gpu": args.source_gpu, "target": str(args.target),
                      "target_gpu": args.target_gpu, "protocol": protocol.describe(), "tie_rel": protocol.tie_rel,
                      "problems_listed": len(protocol.problems), "source_partial": s_partial,
                      "target_partial": t_partial, "candidates_differ": mismatch,
                      "definitions": "workbench/landscape/transfer.py (module docstring)"},
            "per_problem": per}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", type=Path, required=True, help="shipped landscape folder of the source GPU")
    ap.add_argument("--source-gpu", required=True, help="hardware key of the source rows (h200, ...)")
    ap.add_argument("--target", type=Path, required=True, help="shipped landscape folder of the target GPU")
    ap.add_argument("--target-gpu", required=True, help="hardware key of the target rows")
    ap.add_argument("--protocol", type=Path, default=None, help="protocol TOML (default: the committed one)")
    ap.add_argument("--out", default=None, help="also write the results file into this folder")
    args = ap.parse_args(argv)
    if args.source_gpu == args.target_gpu:
        ap.error("--source-gpu and --target-gpu name the same GPU: a transfer needs two")
    doc = run(args)
    s = doc["setup"]
    full = len(doc["per_problem"]) == s["problems_listed"]
    name = f"{doc['benchmark']}-{doc['gpu']}.json"
    paths = write_results(RESULTS, name, json.dumps(doc, indent=1) + "\n", full, args.out,
                          f"{len(doc['per_problem'])} of {s['problems_listed']} problems are whole on both GPUs: "
                          f"not written to {RESULTS} (pass --out to keep it)")
    print(json.dumps(doc["metrics"], indent=1))
    for p in paths:
        print(f"wrote {p}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
