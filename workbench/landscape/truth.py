"""Scoring searches against the truth of a whole landscape: the best found as a share of the
landscape's global best, and the measurements until within 2% of it.

A *run* here is a dict with "problem_id", "seed", "budget" and "curve": its best-so-far steps
[(GPU measurements used, best speedup so far), ...], one entry per improvement, as
`workbench.search.best_curve` writes them (`curve_of_order` turns an order of candidates into
the same). `global_best` is the best recorded speedup among all of the landscape's candidates.

Per run at its budget B:
- `global_best_share`: best found within B measurements / global best (0 when none correct);
- `to_within2pct`: measurements until the best is >= global best * (1 - 0.02), censored at
  B + 1 when never within B ("at least one more than the budget").

Over runs (problem x seed): medians with 95% percentile bootstrap intervals (`median_ci`,
resampling runs), and for two methods on the same problems and seeds the paired differences
(`paired`): the difference of medians and the mean paired difference, each with a bootstrap
interval resampling (problem, seed) pairs.
"""
from __future__ import annotations

import math
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from workbench.landscape.orders import WITHIN_REL, best_so_far

N_BOOT, CI_LEVEL, BOOT_SEED = 10_000, 0.95, 0


def curve_of_order(order: Sequence[str], speedups: Mapping[str, float | None],
                   budget: int | None = None) -> list[tuple[int, float]]:
    """The improvement steps [(measurements, best so far)] of measuring `order` in turn."""
    out: list[tuple[int, float]] = []
    for i, b in enumerate(best_so_far(order, speedups, budget), 1):
        if math.isfinite(b) and (not out or b > out[-1][1]):
            out.append((i, b))
    return out


def best_at(curve: Iterable[Sequence[float]], budget: int) -> float:
    """The best speedup of a run after `budget` measurements (0 when none correct yet)."""
    best = 0.0
    for used, b in curve:
        if used <= budget and b > best:
            best = b
    return best


def global_best_share(curve, best: float, budget: int) -> float:
    if not best > 0:
        raise ValueError("the global best must be a positive speedup")
    return best_at(curve, budget) / best


def to_within(curve, best: float, budget: int, rel: float = WITHIN_REL) -> int:
    """Measurements until within `rel` of `best`, censored at budget + 1."""
    floor = best * (1 - rel) * (1 - 1e-12)
    for used, b in curve:
        if used <= budget and b >= floor:
            return int(used)
    return budget + 1


def run_truth(run: Mapping[str, Any], bests: Mapping[str, float], budget: int | None = None) -> dict[str, float]:
    """A run's `global_best_share` and `to_within2pct` at `budget` (default: its own)."""
    b = int(run["budget"] if budget is None else budget)
    g = bests[run["problem_id"]]
    return {"global_best_share": global_best_share(run["curve"], g, b), "to_within2pct": to_within(run["curve"], g, b)}


def median_ci(values: Sequence[float], n_boot: int = N_BOOT, level: float = CI_LEVEL,
              seed: int = BOOT_SEED) -> list[float] | None:
    """Percentile bootstrap interval of the median (each value one resampled unit)."""
    x = np.asarray(values, dtype=float)
    if len(x) < 2:
        return None
    idx = np.random.default_rng(seed).integers(0, len(x), size=(n_boot, len(x)))
    lo, hi = np.quantile(np.median(x[idx], axis=1), [(1 - level) / 2, (1 + level) / 2])
    return [float(lo), float(hi)]


def ratio_ci(num: Sequence[float], den: Sequence[float], n_boot: int = N_BOOT, level: float = CI_LEVEL,
             seed: int = BOOT_SEED) -> list[float] | None:
    """Percentile bootstrap interval of sum(num) / sum(den), resampling units (pairs of num, den);
    resamples with a zero denominator are left out. None with fewer than two units."""
    a, b = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    if len(a) < 2 or not b.sum() > 0:
        return None
    idx = np.random.default_rng(seed).integers(0, len(a), size=(n_boot, len(a)))
    top, bottom = a[idx].sum(axis=1), b[idx].sum(axis=1)
    r = top[bottom > 0] / bottom[bottom > 0]
    lo, hi = np.quantile(r, [(1 - level) / 2, (1 + level) / 2])
    return [float(lo), float(hi)]


def truth_block(runs: Sequence[Mapping[str, Any]], bests: Mapping[str, float]) -> dict[str, Any]:
    """`global_best_share_median` and `to_within2pct_median`, each with `_ci`, and the share of
    runs within 2% by their budget, over `runs` (one method at one budget)."""
    scored = [r for r in runs if r["problem_id"] in bests]
    t = [run_truth(r, bests) for r in scored]
    share = [x["global_best_share"] for x in t]
    within = [x["to_within2pct"] for x in t]
    reached = [w <= r["budget"] for w, r in zip(within, scored)]
    return {"global_best_share_median": float(np.median(share)) if share else None,
            "global_best_share_median_ci": median_ci(share),
            "to_within2pct_median": float(np.median(within)) if within else None,
            "to_within2pct_median_ci": median_ci(within),
            "within2pct_rate": sum(reached) / len(reached) if reached else None}


def paired(runs: Sequence[Mapping[str, Any]], others: Sequence[Mapping[str, Any]], bests: Mapping[str, float],
           n_boot: int = N_BOOT, level: float = CI_LEVEL, seed: int = BOOT_SEED) -> dict[str, Any]:
    """A method's runs against another's (the same budget) over the (problem, seed) pairs both
    have: for `to_within2pct` (other - this: positive when this needs fewer measurements) and
    `global_best_share` (this - other: positive when this ends nearer the global best), the
    difference of medians (this method's median minus the other's, so negative is better for
    to_within2pct) and the mean paired difference, each with a percentile bootstrap interval
    over pairs."""
    theirs = {(r["problem_id"], r["seed"]): r for r in others}
    pairs = [(run_truth(r, bests), run_truth(theirs[k], bests)) for r in runs
             if (k := (r["problem_id"], r["seed"])) in theirs and r["problem_id"] in bests]
    out: dict[str, Any] = {"pairs": len(pairs)}
    if not pairs:
        return out
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(pairs), size=(n_boot, len(pairs)))
    q = [(1 - level) / 2, (1 + level) / 2]
    for key, sign in (("to_within2pct", -1.0), ("global_best_share", 1.0)):
        mine = np.asarray([a[key] for a, _ in pairs], dtype=float)
        other = np.asarray([b[key] for _, b in pairs], dtype=float)
        med = float(np.median(mine) - np.median(other))
        diff = sign * (mine - other)
        out[f"{key}_median_diff"] = med
        out[f"{key}_median_diff_ci"] = [float(v) for v in np.quantile(
            np.median(mine[idx], axis=1) - np.median(other[idx], axis=1), q)] if len(pairs) > 1 else None
        out[f"{key}_mean_gain"] = float(diff.mean())
        out[f"{key}_mean_gain_ci"] = [float(v) for v in np.quantile(diff[idx].mean(axis=1), q)] \
            if len(pairs) > 1 else None
    return out
