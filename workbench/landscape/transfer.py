"""How one GPU's measured landscape predicts another's: the source GPU's recorded speedups used
as the forecast for the target GPU, beside a uniformly random order (the control) on the same
target landscape.

For one problem whose landscape is measured whole on both GPUs (`ids`: every candidate of the
landscape, points then mutation children; `source`, `target`: speedup by candidate id, None or
absent for a candidate that was not measured correct on that GPU; `tie_rel` as in
`structure`):
- `candidates`; `common_correct`: candidates correct on both GPUs.
- `spearman`: rank correlation of the two GPUs' speedups over the common correct candidates
  (None below 3 of them, or when a side is constant).
- `source_best_on_target`: the target speedup of the source's fastest candidate / the target's
  best (0 when that candidate is not correct on the target).
- `source_top4_on_target`: the best target speedup among the source's 4 fastest / the target's
  best: what measuring the source's top 4 on the target would keep.
- `source_order_budget_to_best`: the 1-based position, in the source's order (fastest first,
  ties by landscape order; candidates not correct on the source after them, in landscape
  order), of the first candidate within the tie of the target's best (>= best * (1 - tie_rel)),
  / `budget`.
- `random_order_budget_to_best`: the median position of that first candidate in a uniformly
  random order of all candidates (`structure.median_first_hit`), / `budget`.
- `source_order_gain`: random_order_budget_to_best - source_order_budget_to_best (positive when
  the source's order reaches the target's best sooner).
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from workbench.calibration.metrics import spearman
from workbench.errors import WorkbenchError
from workbench.landscape.structure import BUDGET, TIE_REL, median_first_hit

TOP = 4


class TransferError(WorkbenchError):
    """A transfer comparison was asked of data that cannot give it (nothing correct on a GPU)."""


def transfer(ids: Sequence[str], source: Mapping[str, float | None], target: Mapping[str, float | None],
             tie_rel: float = TIE_REL, budget: int = BUDGET) -> dict[str, Any]:
    """The module docstring's metrics for one landscape."""
    ids = list(dict.fromkeys(ids))
    src = {c: source.get(c) for c in ids if source.get(c)}
    tgt = {c: target.get(c) for c in ids if target.get(c)}
    if not src or not tgt:
        raise TransferError(f"{len(src)} candidates correct on the source and {len(tgt)} on the target: "
                            "a transfer needs at least one on each")
    best = max(tgt.values())
    good = {c for c, s in tgt.items() if s >= best * (1 - tie_rel)}
    pos = {c: i for i, c in enumerate(ids)}
    order = sorted(src, key=lambda c: (-src[c], pos[c])) + [c for c in ids if c not in src]
    first = next(i for i, c in enumerate(order, 1) if c in good)
    common = [c for c in ids if c in src and c in tgt]
    hit = median_first_hit(len(ids), len(good))
    rho = spearman([src[c] for c in common], [tgt[c] for c in common]) if len(common) >= 3 else math.nan
    src_order = first / budget
    rand = hit / budget
    return {"candidates": len(ids), "common_correct": len(common),
            "spearman": None if math.isnan(rho) else float(rho),
            "source_best_on_target": (tgt.get(order[0]) or 0.0) / best,
            "source_top4_on_target": max((tgt.get(c) or 0.0) for c in order[:TOP]) / best,
            "source_order_budget_to_best": src_order, "random_order_budget_to_best": rand,
            "source_order_gain": rand - src_order, "target_within_tie": len(good)}
