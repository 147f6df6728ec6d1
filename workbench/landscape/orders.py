"""The two reference orders of an enumerable space, and scoring an order against the global best.

Where a problem's whole space is enumerable (a landscape, a set of autotune configs), any
search over it can be judged against two orders that need no search at all:

- `ranked_order`: measure every candidate, in the order of a forecaster's score (for example
  the expected log2 speedup, `forecast_scores`), best first. A search that needs more
  measurements than this to reach the best has not yet used its forecaster well.
- `random_order`: measure every candidate in a uniformly random order, seeded. The control.

`best_so_far` turns an order and the measured speedups into the best speedup found after each
measurement (a failed or unmeasured candidate costs its measurement and finds nothing), and
`share_of_best` and `measurements_to_within` read that curve against the space's global best
(`global_best`): the best found as a share of it within a budget, and the measurements until a
speedup within `rel` of it was found (None when never within the budget: censored).

Speedups are over the problem's reference (dimensionless, > 0 when correct); a failed candidate
is NaN, None or absent. Orders are lists of candidate ids; every function here is pure.
"""
from __future__ import annotations

import hashlib
import math
import random
from typing import Any, Iterable, Mapping, Sequence

#: "Within 2% of the global best": the landscapes' timing-noise tolerance (the protocol's tie_rel).
WITHIN_REL = 0.02


def _speed(speedups: Mapping[str, float | None], cid: str) -> float:
    """A candidate's speedup, NaN when it failed or has none."""
    v = speedups.get(cid)
    return float(v) if v is not None and v > 0 and math.isfinite(v) else math.nan


def ranked_order(candidate_ids: Sequence[str], scores: Mapping[str, float]) -> list[str]:
    """Every id of `candidate_ids`, highest score first. Ties, and ids without a finite score
    (they go last), keep their order in `candidate_ids`, so the order is deterministic.
    Duplicate ids are kept once (first place)."""
    ids = list(dict.fromkeys(candidate_ids))

    def key(item: tuple[int, str]) -> tuple[int, float, int]:
        i, cid = item
        s = scores.get(cid)
        ok = s is not None and math.isfinite(s)
        return (0 if ok else 1, -s if ok else 0.0, i)

    return [cid for _, cid in sorted(enumerate(ids), key=key)]


def random_order(candidate_ids: Sequence[str], seed: int, salt: str = "") -> list[str]:
    """Every id of `candidate_ids` (duplicates once) in a uniformly random order drawn by a
    generator seeded with `seed` and `salt` (say, the problem id): the same order in any process.
    The input order does not matter: ids are sorted before the shuffle."""
    ids = sorted(set(candidate_ids))
    digest = hashlib.sha256(f"random-order\0{salt}\0{int(seed)}".encode()).hexdigest()
    random.Random(digest).shuffle(ids)
    return ids


def forecast_scores(forecaster: Any, problem: Any, candidates: Iterable[Any], hardware: Any) -> dict[str, float]:
    """Expected log2 speedup over the reference of each candidate, by one `forecast_batch` call of
    `forecaster` (the ranking score of `ranked_order`); an abstention scores 0 (no speedup)."""
    cands = list(candidates)
    fs = forecaster.forecast_batch([(problem, c) for c in cands], hardware, relative_to="reference")
    return {c.id: (0.0 if f.abstained else float(f.expected_log2_speedup)) for c, f in zip(cands, fs)}


def best_so_far(order: Sequence[str], speedups: Mapping[str, float | None],
                budget: int | None = None) -> list[float]:
    """The best speedup found after each of the first `budget` (default: all) measurements of
    `order`: element i is the best over order[:i + 1]; NaN until the first correct candidate."""
    n = len(order) if budget is None else min(int(budget), len(order))
    out: list[float] = []
    best = math.nan
    for cid in order[:n]:
        s = _speed(speedups, cid)
        if math.isfinite(s) and not (s <= best):  # NaN best: the first correct one sets it
            best = s
        out.append(best)
    return out


def global_best(speedups: Mapping[str, float | None], candidate_ids: Iterable[str] | None = None) -> float:
    """The best speedup of the space (of `candidate_ids`, default every key); NaN when none is
    correct."""
    ids = speedups.keys() if candidate_ids is None else candidate_ids
    vals = [s for cid in ids if math.isfinite(s := _speed(speedups, cid))]
    return max(vals) if vals else math.nan


def share_of_best(curve: Sequence[float], best: float, budget: int) -> float:
    """The best found within `budget` measurements of a `best_so_far` curve as a share of the
    space's global `best` (0 when nothing correct was found; a curve shorter than the budget is
    read at its end: the space was used up)."""
    if not best > 0:
        raise ValueError("the global best must be a positive speedup")
    if budget < 1 or not curve:
        return 0.0
    v = curve[min(budget, len(curve)) - 1]
    return v / best if math.isfinite(v) else 0.0


def measurements_to_within(curve: Sequence[float], best: float, rel: float = WITHIN_REL,
                           budget: int | None = None) -> int | None:
    """Measurements (1-based) until the `best_so_far` curve first holds a speedup >= best *
    (1 - rel), reading at most `budget` of them; None when it never does (censored)."""
    if not best > 0 or rel < 0:
        raise ValueError("need a positive global best and rel >= 0")
    floor = best * (1 - rel) * (1 - 1e-12)  # round-off: rel = 0 still matches the best itself
    n = len(curve) if budget is None else min(int(budget), len(curve))
    return next((i + 1 for i in range(n) if math.isfinite(curve[i]) and curve[i] >= floor), None)


def censored(hit: int | None, budget: int) -> int:
    """A `measurements_to_within` result censored at `budget`: budget + 1 when it never got there
    within the budget ("at least one more than the budget"), so medians stay defined."""
    return hit if hit is not None and hit <= budget else budget + 1


__all__ = ["WITHIN_REL", "best_so_far", "censored", "forecast_scores", "global_best", "measurements_to_within",
           "random_order", "ranked_order", "share_of_best"]
