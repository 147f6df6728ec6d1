"""The structure of a measured landscape: how hard it is for a search to find its best point.

Definitions (`tie_rel` is the timing-noise tolerance, 0.02 by default):
- `points`: the landscape's candidates; `correct`: those measured ok with a speedup.
- `speed_clusters`: correct speedups sorted from the best down, grouped greedily: a new cluster
  starts at the first speedup more than `tie_rel` below the current cluster's first (fastest)
  member. The number of groups is the number of speeds a search can tell apart.
- `within_tie_share`: share of ALL points (failed ones included: a search pays for them too)
  whose speedup is >= best * (1 - tie_rel); `within_tie_share_correct`: the same over correct ones.
- `spread`: best / worst correct speedup; `spread_p90_p10`: 90th / 10th percentile.
- `random_order_budget_to_best`: the median number of measurements a uniformly random order of
  all points takes to reach a point within the tie of the best, exactly (hypergeometric: with N
  points of which K are good, P(first good after t) = C(N-K, t) / C(N, t)), divided by
  `budget` (64). `random_order_budget_to_best_mean`: the expectation (N + 1) / (K + 1) / budget.

Repeatability (`repeatability`), over candidates measured twice (by two calls, on two machines of
one GPU type): `pairs`; `same_status_share`; over pairs correct both times, `both_correct`,
`abs_log_speedup_median` and `abs_log_speedup_p90` (|ln(second / first speedup)|), and
`within_tie_share` (pairs whose two speedups tie: the smaller >= the larger * (1 - tie_rel)).
"""
from __future__ import annotations

import math
import statistics
from typing import Any, Iterable

from workbench.records import Measurement

TIE_REL = 0.02
BUDGET = 64


def speed_clusters(speedups: Iterable[float], tie_rel: float = TIE_REL) -> int:
    xs = sorted((s for s in speedups if s and s > 0), reverse=True)
    n, head = 0, None
    for s in xs:
        if head is None or s < head * (1 - tie_rel):
            n += 1
            head = s
    return n


def median_first_hit(n: int, k: int) -> int | None:
    """Median position (1-based) of the first of k good items in a uniformly random order of n;
    None when k == 0."""
    if k <= 0 or n <= 0:
        return None
    miss = 1.0  # P(none of the first t is good)
    for t in range(1, n + 1):
        miss *= (n - k - (t - 1)) / (n - (t - 1)) if n - (t - 1) > 0 else 0.0
        if 1 - miss >= 0.5:
            return t
    return n


def structure(measurements: Iterable[Measurement], n_points: int | None = None, tie_rel: float = TIE_REL,
              budget: int = BUDGET) -> dict[str, Any]:
    """The module docstring's metrics for one landscape's measurements (one per candidate)."""
    ms = list(measurements)
    n = n_points if n_points is not None else len(ms)
    sp = [m.speedup for m in ms if m.ok and m.speedup]
    out: dict[str, Any] = {"points": n, "measured": len(ms), "correct": len(sp)}
    if not sp:
        return {**out, "best_speedup": None, "speed_clusters": 0, "within_tie_share": None,
                "within_tie_share_correct": None, "spread": None, "spread_p90_p10": None,
                "random_order_budget_to_best": None, "random_order_budget_to_best_mean": None}
    best = max(sp)
    good = sum(s >= best * (1 - tie_rel) for s in sp)
    q = statistics.quantiles(sp, n=10) if len(sp) >= 2 else [sp[0]] * 9
    hit = median_first_hit(n, good)
    return {**out, "best_speedup": best, "speed_clusters": speed_clusters(sp, tie_rel),
            "within_tie_share": good / n, "within_tie_share_correct": good / len(sp),
            "spread": best / min(sp), "spread_p90_p10": q[8] / q[0] if q[0] > 0 else math.inf,
            "random_order_budget_to_best": hit / budget if hit is not None else None,
            "random_order_budget_to_best_mean": (n + 1) / (good + 1) / budget, "tie_rel": tie_rel,
            "budget": budget}


def ties(a: float, b: float, tie_rel: float = TIE_REL) -> bool:
    """Two speedups tie: the smaller >= the larger * (1 - tie_rel)."""
    return min(a, b) >= max(a, b) * (1 - tie_rel)


def repeatability(pairs: Iterable[tuple[Measurement, Measurement]], tie_rel: float = TIE_REL) -> dict[str, Any]:
    """The module docstring's repeatability metrics for (first, second) measurements of one candidate."""
    ps = list(pairs)
    ok = [(a.speedup, b.speedup) for a, b in ps if a.ok and b.ok and a.speedup and b.speedup]
    d = sorted(abs(math.log(b / a)) for a, b in ok)
    return {"pairs": len(ps), "same_status_share": sum(a.status == b.status for a, b in ps) / len(ps) if ps else None,
            "both_correct": len(ok), "abs_log_speedup_median": statistics.median(d) if d else None,
            "abs_log_speedup_p90": d[min(len(d) - 1, math.ceil(0.9 * len(d)) - 1)] if d else None,
            "within_tie_share": sum(ties(a, b, tie_rel) for a, b in ok) / len(ok) if ok else None,
            "tie_rel": tie_rel}
