"""How well the forecaster tells, for a parent and one of its neighbours, that the child will NOT
beat the parent: the question certified_skip's certificate is built on (no GPU).

It draws the calibration pairs certified_skip uses in `search_landscape.py` (TRAINING landscapes
only, each child forecast out of fold: workbench/landscape/trust.py, the same settings) and, for
each margin (a child "beats" its parent when faster by more than the margin), reports beside a
seeded random-score control on the same pairs:
- base_rate: the share of pairs whose child beat its parent;
- auc: P(a child that did not beat its parent has a higher beat_confidence than one that did);
- risk_by_share: the beat rate among the top share of pairs by confidence (what trusting that
  share would have cost), learned and random;
- certificates: `certify_skip` at each target risk (delta --delta): threshold, coverage, risk.
No held-out problem is read. With --reference best, each child is judged against a search
state's best instead of its parent (certified_skip_best's question; trust.py says how the state is
drawn) and the file is trust-pairs-best-<gpu>.json. Writes benchmarks/results/trust-pairs-<gpu>.json
for real data, otherwise only under --out.

    python benchmarks/trust_pairs_bench.py --landscapes kernels_cache/landscapes/h200 --gpu h200 \\
        --train-data kernels_cache/shipped
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import commit, write_results  # noqa: E402
from search_landscape import FORECASTERS, RESULTS_DIR, TrustSettings, training_records  # noqa: E402
from search_control import protocol_factory  # noqa: E402
from workbench.dataset.shipped import load_shipped  # noqa: E402
from workbench.execution.executors import CacheExecutor  # noqa: E402
from workbench.landscape import load_protocol, read_landscapes  # noqa: E402
from workbench.landscape.trust import REFERENCES, calibration_pairs, rank_auc, risk_by_share  # noqa: E402
from workbench.search.methods import beat_confidence, beat_losses, certify_skip  # noqa: E402

MARGINS = (0.0, 0.02, 0.05, 0.10)
SHARES = (0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0)
RISKS = (0.1, 0.2)


def summarise(probabilities, reference_speedups, child_speedups, margins: Sequence[float] = MARGINS,
              shares: Sequence[float] = SHARES, risks: Sequence[float] = RISKS, delta: float = 0.1,
              seed: int = 0, reference: str = "parent") -> dict[str, Any]:
    """The per-margin metrics above for (n, 8) child forecasts, the speedups each child is
    judged against (its parent's, or a search state's best: `reference`) and the children's
    measured speedups; the random control's confidence is one seeded uniform draw per pair,
    shared by every margin."""
    p = np.asarray(probabilities, dtype=float)
    ref = np.asarray(reference_speedups, dtype=float)
    rand = np.random.default_rng(seed).random(len(p))
    out: dict[str, Any] = {}
    for margin in margins:
        conf = beat_confidence(p, ref, margin)
        loss = beat_losses(child_speedups, ref, margin)
        certs = {}
        for risk in risks:
            c = certify_skip(p, ref, child_speedups, risk, delta, margin, reference)
            certs[f"{risk:g}"] = {"threshold": c.threshold if np.isfinite(c.threshold) else None,
                                  "coverage": c.coverage, "risk": c.risk}
        out[f"{margin:g}"] = {"pairs": int(len(p)), "base_rate": float(loss.mean()) if len(loss) else None,
                              "auc": rank_auc(conf, loss), "auc_random": rank_auc(rand, loss),
                              "risk_by_share": risk_by_share(conf, loss, shares),
                              "risk_by_share_random": risk_by_share(rand, loss, shares),
                              "certificates": certs}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--landscapes", type=Path, required=True, help="a shipped landscape folder")
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--train-data", type=Path, nargs="*", default=[],
                    help="more shipped data to fit on (held-out problems' rows are dropped)")
    ap.add_argument("--forecaster", choices=tuple(FORECASTERS), default="learned")
    ap.add_argument("--protocol", type=Path, default=None)
    ap.add_argument("--delta", type=float, default=TrustSettings.delta)
    ap.add_argument("--folds", type=int, default=TrustSettings.folds)
    ap.add_argument("--parents", type=int, default=TrustSettings.parents)
    ap.add_argument("--children", type=int, default=TrustSettings.children)
    ap.add_argument("--reference", choices=REFERENCES, default="parent",
                    help="what a child is judged against: its parent, or a search state's best")
    ap.add_argument("--out", type=Path, default=None, help="also write the results file here")
    args = ap.parse_args(argv)
    protocol = load_protocol(args.protocol)
    t0 = time.time()
    lands = read_landscapes(args.landscapes)
    train = {pid: land for pid, land in lands.items() if not protocol.is_heldout(pid)}
    if not train:
        raise SystemExit(f"{args.landscapes} holds no training landscape")
    records = training_records(args.landscapes, args.train_data, args.gpu, protocol)
    make = protocol_factory(FORECASTERS[args.forecaster], protocol)
    hardware = CacheExecutor([m for m in records.measurements if m.hardware_key == args.gpu], args.gpu).hardware
    pairs = calibration_pairs(train, records, lambda rs: make(rs, ""), hardware, protocol, args.parents,
                              args.children, args.folds, reference=args.reference)
    if not len(pairs):
        raise SystemExit("no calibration pair: no measured neighbour, or the forecaster abstained on every child")
    synthetic = any(x.reason == "synthetic" for x in load_shipped(args.landscapes).measurements)
    doc = {"benchmark": "trust-pairs", "gpu": args.gpu, "date": time.strftime("%Y-%m-%d"), "commit": commit(),
           "metrics": summarise(pairs.probabilities, pairs.reference_speedups, pairs.child_speedups,
                                delta=args.delta, reference=args.reference),
           "setup": {"protocol": protocol.describe(), "forecaster": args.forecaster, "landscapes": str(args.landscapes),
                     "train_data": [str(p) for p in args.train_data], "delta": args.delta, "margins": list(MARGINS),
                     "shares": list(SHARES), "risks": list(RISKS), "synthetic": synthetic,
                     "seconds": round(time.time() - t0, 1), **pairs.describe()}}
    name = f"trust-pairs-{args.gpu}.json" if args.reference == "parent" else f"trust-pairs-{args.reference}-{args.gpu}.json"
    for p in write_results(RESULTS_DIR, name, json.dumps(doc, indent=1, default=float) + "\n", not synthetic,
                           args.out, "a synthetic run is not a result: pass --out DIR to keep it"):
        print(f"wrote {p}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
