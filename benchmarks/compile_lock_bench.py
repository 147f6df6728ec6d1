"""compile_unlocked against the default GPU lock: throughput and agreement, on one machine.

The default lock makes a timer wait for every check already inside the GPU, including any Triton
compile it is in; with the measurement option `compile_unlocked` a worker steps out of its
shared hold while Triton compiles (docs/measuring.md). This measures what that changes.

One batch of landscape candidates (every `--every`-th point, from `--offset`, of `--problems`,
in landscape order) is measured three times through the Ray actor executor on every GPU of the
machine, each run on a fresh cluster with a fresh build cache, in the order default,
compile_unlocked, default:
- rate: measurements per minute of each run; the two default runs bracket the unlocked one, so
  drift (a warming machine) shows as their difference. `rate_ratio` = the unlocked rate / the
  mean of the two default rates.
- agreement (workbench.landscape.structure.repeatability, 2% tie): the unlocked run against the
  first default run, beside the second default run against the first (the control: what
  measuring the same candidates again moves by itself). Only candidates measured in all three
  runs are compared. Paired on the candidates correct in all three: `discordant_unlocked_only`
  (the defaults tie, the unlocked run lies outside the tie of the first), `discordant_control_only`
  (the reverse) and `discordant_p` (exact two-sided sign test on those two counts: small when the
  unlocked run disagrees more often than measuring again does).
- A run that measures its whole batch before the budget includes its tail (workers idle while
  the last candidates finish) in its rate; a run cut by the budget does not.

    python benchmarks/compile_lock_bench.py --out $OUT --problems L1/14_matmul_square_fp32,L2/01_linear_bias_relu --every 8 --budget-s 150

writes the rows of each run and benchmarks/results/compile-lock-<gpu>.json (`metrics`:
candidates, gpus, per_min_default_1, per_min_unlocked, per_min_default_2, rate_ratio,
unlocked_vs_default_*, default_vs_default_*, discordant_* and each run's measured count and cut).
`--cpu`: a smoke test with the CPU executor (no GPU lock, so the option changes nothing there);
its file goes to --out only, never to benchmarks/results.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import landscape_bench as lb  # noqa: E402
from _common import commit  # noqa: E402

from workbench.landscape.structure import repeatability, ties  # noqa: E402
from workbench.records import Measurement  # noqa: E402

RUNS = (("default_1", False), ("unlocked", True), ("default_2", False))


def discordance(triples: list[tuple[Measurement, Measurement, Measurement]], tie_rel: float) -> dict[str, Any]:
    """The paired counts of the module docstring over (default_1, unlocked, default_2) rows of
    one candidate each; only triples correct in all three count."""
    ok = [(a.speedup, u.speedup, b.speedup) for a, u, b in triples
          if a.ok and u.ok and b.ok and a.speedup and u.speedup and b.speedup]
    unlocked_only = sum(ties(a, b, tie_rel) and not ties(a, u, tie_rel) for a, u, b in ok)
    control_only = sum(ties(a, u, tie_rel) and not ties(a, b, tie_rel) for a, u, b in ok)
    n, k = unlocked_only + control_only, min(unlocked_only, control_only)
    p = min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n) if n else 1.0
    return {"discordant_unlocked_only": unlocked_only, "discordant_control_only": control_only,
            "discordant_p": round(p, 4)}


def run(args) -> int:
    pids = [p for p in args.problems.split(",") if p]
    if not pids:
        raise SystemExit("--problems: name at least one landscape problem")
    if not 0 <= args.offset < args.every:
        raise SystemExit(f"--offset {args.offset}: need 0 <= offset < --every ({args.every})")
    cands = lb.shard_candidates(pids, args.max_points, 0, 0, args.offset, args.every)
    if not cands:
        raise SystemExit("the batch is empty: fewer points than --offset")
    args.out.mkdir(parents=True, exist_ok=True)
    gpus = 1 if args.cpu else (args.gpus or lb._visible_gpus())
    lb.log(f"compile lock: {len(cands)} candidates of {len(pids)} problem(s), {gpus} GPU(s), runs "
           + ", ".join(name for name, _ in RUNS))
    runs, rows = {}, {}
    for name, unlocked in RUNS:
        opts = argparse.Namespace(cpu=args.cpu, local=False, ray_mode="actors", workers=args.workers, chunk=1,
                                  timeout_s=args.timeout_s, run_timeout_s=args.run_timeout_s,
                                  compile_unlocked=unlocked)
        path = args.out / f"compile-lock-{name}.jsonl"
        path.unlink(missing_ok=True)
        res = lb.measure_batch(cands, opts, gpus, time.time() + args.budget_s, path)
        runs[name] = {k: v for k, v in res.items() if k != "ids"} | {"compile_unlocked": unlocked}
        rows[name] = {r["candidate_id"]: Measurement.from_dict(r) for r in lb.read_jsonl(path)}
        lb.log(f"{name}: {res['measured']}/{len(cands)} in {res['elapsed_s']} s ({res['per_min']}/min)")
    common = [c.id for c in cands if all(c.id in rows[name] for name, _ in RUNS)]
    vs_default = repeatability([(rows["default_1"][i], rows["unlocked"][i]) for i in common])
    control = repeatability([(rows["default_1"][i], rows["default_2"][i]) for i in common])
    paired = discordance([(rows["default_1"][i], rows["unlocked"][i], rows["default_2"][i]) for i in common],
                         vs_default["tie_rel"])
    rates = {name: runs[name]["per_min"] for name, _ in RUNS}
    base = [rates["default_1"], rates["default_2"]]
    hw = next((r["hardware"] for r in runs.values() if r.get("hardware")), None) or {}
    key = "cpu" if args.cpu else hw.get("key", "gpu")
    metrics = {"candidates": len(cands), "compared": len(common), "gpus": gpus,
               **{f"per_min_{name}": rates[name] for name, _ in RUNS},
               "rate_ratio": (round(rates["unlocked"] / statistics.mean(base), 3)
                              if rates["unlocked"] and all(base) else None),
               **{f"unlocked_vs_default_{k}": v for k, v in vs_default.items() if k != "tie_rel"},
               **{f"default_vs_default_{k}": v for k, v in control.items() if k != "tie_rel"},
               **paired,
               **{f"measured_{name}": runs[name]["measured"] for name, _ in RUNS},
               **{f"cut_{name}": runs[name]["cut_by_budget"] for name, _ in RUNS}}
    doc = {"benchmark": "compile-lock", "gpu": key, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "commit": commit(), "metrics": metrics,
           "setup": {"problems": pids, "every": args.every, "offset": args.offset, "max_points": args.max_points,
                     "executor": f"ray actors, {args.workers} workers per GPU" if not args.cpu else "cpu interpreter",
                     "order": [name for name, _ in RUNS], "budget_s_per_run": args.budget_s,
                     "tie_rel": vs_default["tie_rel"], "hardware": hw or None,
                     "runs": {name: {k: v for k, v in r.items() if k != "hardware"} for name, r in runs.items()}}}
    name = f"compile-lock-{key}.json"
    paths = [args.out / name] + ([] if args.cpu else [lb.RESULTS_DIR / name])
    for p in paths:
        p.write_text(json.dumps(doc, indent=1) + "\n")
    lb.log(f"wrote {', '.join(map(str, paths))}: rate_ratio {metrics['rate_ratio']}, within tie "
           f"{metrics['unlocked_vs_default_within_tie_share']} (control {metrics['default_vs_default_within_tie_share']})")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True, help="where the runs' rows and the results file go")
    ap.add_argument("--problems", required=True, help="comma-separated landscape problem ids")
    ap.add_argument("--every", type=int, default=8, help="every n-th candidate of the problems' landscapes")
    ap.add_argument("--offset", type=int, default=0, help="starting at this one (0 <= offset < every)")
    ap.add_argument("--max-points", type=int, default=None, help="at most this many points per problem (smoke)")
    ap.add_argument("--gpus", type=int, default=None, help="GPUs (default: all visible)")
    ap.add_argument("--workers", type=int, default=12, help="worker processes per GPU")
    ap.add_argument("--timeout-s", type=float, default=90.0)
    ap.add_argument("--run-timeout-s", type=float, default=60.0)
    ap.add_argument("--budget-s", type=float, default=150.0, help="stop waiting for a run after this many seconds")
    ap.add_argument("--cpu", action="store_true", help="smoke test on the CPU executor, never a results file")
    args = ap.parse_args(argv)
    if args.every < 1:
        ap.error("--every must be at least 1")
    if args.cpu:
        args.workers = min(args.workers, 2)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
