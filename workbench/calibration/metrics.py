"""Forecast quality metrics over the 8 speedup bins (numpy only).

Conventions shared by every function here:
- `probs` is an (n, 8) array of bin probabilities, one row per forecast; rows are
  renormalised to sum to 1 (a row summing to zero is an error).
- `y` is an (n,) array of true bin indices 0..7 (`workbench.bins.bin_of` of the measured speedup).
- Every score is a mean over the n rows; lower is better for ECE, Brier, CRPS and NLL, higher
  for the accuracies, Spearman and top-k recovery.

The definitions follow the GPU Forecasters study: ECE over 10 equal-width confidence buckets
with confidence = the argmax bin's probability; Brier = half the summed squared error against
the one-hot truth (so in [0, 1]); ordinal CRPS = squared gaps between the predicted and the
true step CDF at the 7 inner edges, divided by 7 (so in [0, 1]).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Hashable, Sequence

import numpy as np

from workbench import bins
from workbench.calibration.errors import MetricInputError

N_BINS = bins.N_BINS


def as_arrays(probs, y) -> tuple[np.ndarray, np.ndarray]:
    """Validate and return (probs as float (n, 8) rows summing to 1, y as int (n,))."""
    p = np.asarray(probs, dtype=float)
    t = np.asarray(y)
    if p.ndim != 2 or p.shape[1] != N_BINS:
        raise MetricInputError(f"probabilities must have shape (n, {N_BINS}), got {p.shape}")
    if t.shape != (p.shape[0],):
        raise MetricInputError(f"true bins must have shape ({p.shape[0]},), got {t.shape}")
    if p.shape[0] == 0:
        raise MetricInputError("no forecasts to score; pass at least one row")
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise MetricInputError("probabilities must be finite and non-negative")
    s = p.sum(axis=1, keepdims=True)
    if np.any(s <= 0):
        raise MetricInputError("a row of probabilities sums to zero")
    t_int = t.astype(int)
    if np.any(t_int != t) or np.any(t_int < 0) or np.any(t_int >= N_BINS):
        raise MetricInputError(f"true bins must be integers in 0..{N_BINS - 1}")
    return p / s, t_int


#: How a forecast's predicted bin is read: "argmax" (the most probable bin, lowest index on ties;
#: the default) or "stated" (the bin the forecaster stated, e.g. an LLM's predicted_bin, as the
#: GPU Forecasters study scores it; the argmax where none was stated).
PREDICTED_BIN_RULES = ("argmax", "stated")


def predicted_bins(probs, stated=None) -> np.ndarray:
    """Predicted bin index of each row: the argmax, replaced by `stated` (n,) where that is a
    bin index 0..7 (None, NaN or -1 = none stated)."""
    p = np.asarray(probs, dtype=float)
    pred = p.argmax(axis=1)
    if stated is None:
        return pred
    st = np.asarray([-1 if x is None or x != x else int(x) for x in stated], dtype=int)
    if st.shape != pred.shape:
        raise MetricInputError(f"stated bins must have shape {pred.shape}, got {st.shape}")
    ok = (st >= 0) & (st < N_BINS)
    return np.where(ok, st, pred)


def _pred(p: np.ndarray, predicted) -> np.ndarray:
    if predicted is None:
        return p.argmax(axis=1)
    pred = np.asarray(predicted, dtype=int)
    if pred.shape != (p.shape[0],) or np.any(pred < 0) or np.any(pred >= N_BINS):
        raise MetricInputError(f"predicted bins must be {p.shape[0]} indices in 0..{N_BINS - 1}")
    return pred


def accuracy(probs, y, predicted=None) -> float:
    """Fraction of rows whose predicted bin (`predicted` (n,), default the most probable bin,
    lowest index on ties) is the true bin."""
    p, t = as_arrays(probs, y)
    return float(np.mean(_pred(p, predicted) == t))


def off_by_one_accuracy(probs, y, predicted=None) -> float:
    """Fraction of rows whose predicted bin (as `accuracy`) is the true bin or a neighbour."""
    p, t = as_arrays(probs, y)
    return float(np.mean(np.abs(_pred(p, predicted) - t) <= 1))


@dataclass(frozen=True)
class Reliability:
    """Reliability-diagram data over equal-width confidence buckets.

    Bucket i covers confidences [i/B, (i+1)/B); the last bucket also holds 1.0. `count[i]` rows
    fell in bucket i; `confidence[i]` and `accuracy[i]` are their mean confidence and accuracy
    (NaN for an empty bucket). `ece` = sum_i count[i]/n * |accuracy[i] - confidence[i]|.
    """

    edges: np.ndarray       # (B + 1,)
    count: np.ndarray       # (B,) int
    confidence: np.ndarray  # (B,)
    accuracy: np.ndarray    # (B,)
    ece: float


def reliability(probs, y, n_buckets: int = 10, predicted=None) -> Reliability:
    """Reliability-diagram data with confidence = the probability of the predicted bin (the max
    probability by default; with `predicted` (n,) bins, theirs) (see `Reliability`)."""
    p, t = as_arrays(probs, y)
    if n_buckets < 1:
        raise MetricInputError("n_buckets must be at least 1")
    pred = _pred(p, predicted)
    conf = p[np.arange(len(t)), pred]
    correct = (pred == t).astype(float)
    idx = np.minimum((conf * n_buckets).astype(int), n_buckets - 1)
    count = np.bincount(idx, minlength=n_buckets)
    conf_sum = np.bincount(idx, weights=conf, minlength=n_buckets)
    acc_sum = np.bincount(idx, weights=correct, minlength=n_buckets)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = np.where(count > 0, conf_sum / np.maximum(count, 1), np.nan)
        mean_acc = np.where(count > 0, acc_sum / np.maximum(count, 1), np.nan)
    gaps = np.where(count > 0, np.abs(mean_acc - mean_conf), 0.0)
    ece_value = float(np.sum(count / len(t) * gaps))
    return Reliability(edges=np.linspace(0.0, 1.0, n_buckets + 1), count=count,
                       confidence=mean_conf, accuracy=mean_acc, ece=ece_value)


def ece(probs, y, n_buckets: int = 10, predicted=None) -> float:
    """Expected calibration error, 10 equal-width buckets of the predicted bin's probability
    (the max probability unless `predicted` bins are given)."""
    return reliability(probs, y, n_buckets, predicted).ece


def sharpness(probs) -> float:
    """Mean max probability of the rows (the mean ECE confidence): how concentrated the forecasts
    are, whatever the truth; 1/8 for uniform forecasts, 1 for one-hot ones."""
    p = np.asarray(probs, dtype=float)
    if p.ndim != 2 or p.shape[1] != N_BINS or p.shape[0] == 0:
        raise MetricInputError(f"probabilities must have shape (n, {N_BINS}) with n >= 1, got {p.shape}")
    return float(np.mean(p.max(axis=1) / p.sum(axis=1)))


def one_hot(y, n: int = N_BINS) -> np.ndarray:
    t = np.asarray(y, dtype=int)
    out = np.zeros((len(t), n))
    out[np.arange(len(t)), t] = 1.0
    return out


def brier_rows(probs, y) -> np.ndarray:
    """Per-row Brier score: half the summed squared error against the one-hot truth, in [0, 1]."""
    p, t = as_arrays(probs, y)
    return 0.5 * np.sum((p - one_hot(t)) ** 2, axis=1)


def brier(probs, y) -> float:
    """Half the summed squared error against the one-hot truth, mean over rows; in [0, 1]."""
    return float(np.mean(brier_rows(probs, y)))


def crps_rows(probs, y) -> np.ndarray:
    """Per-row ordinal CRPS: sum_k (F(k) - 1[y <= k])^2 / 7 over the 7 inner edges, in [0, 1].

    F(k) is the predicted probability of a bin index <= k (k = 0..6).
    """
    p, t = as_arrays(probs, y)
    cdf = np.cumsum(p, axis=1)[:, : N_BINS - 1]
    step = (t[:, None] <= np.arange(N_BINS - 1)[None, :]).astype(float)
    return np.sum((cdf - step) ** 2, axis=1) / (N_BINS - 1)


def crps(probs, y) -> float:
    """Ordinal CRPS: mean over rows of `crps_rows`; in [0, 1]."""
    return float(np.mean(crps_rows(probs, y)))


def nll(probs, y, eps: float = 1e-12) -> float:
    """Mean negative log-likelihood (natural log) of the true bin, probabilities clipped at eps."""
    p, t = as_arrays(probs, y)
    return float(np.mean(-np.log(np.clip(p[np.arange(len(t)), t], eps, 1.0))))


def rankdata(x) -> np.ndarray:
    """Ranks 1..n with ties given their average rank."""
    a = np.asarray(x, dtype=float)
    order = np.argsort(a, kind="stable")
    ranks = np.empty(len(a))
    sorted_a = a[order]
    i = 0
    while i < len(a):
        j = i
        while j + 1 < len(a) and sorted_a[j + 1] == sorted_a[i]:
            j += 1
        ranks[order[i: j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return ranks


def spearman(predicted, measured) -> float:
    """Spearman rank correlation (average ranks for ties); NaN when n < 2 or a side is constant.

    Used with predicted = expected log2-speedup and measured = log2 of the measured speedup.
    """
    a = np.asarray(predicted, dtype=float)
    b = np.asarray(measured, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise MetricInputError("spearman needs two 1-D arrays of the same length")
    if len(a) < 2:
        return float("nan")
    ra, rb = rankdata(a), rankdata(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    den = math.sqrt(float(np.sum(ra ** 2) * np.sum(rb ** 2)))
    return float(np.sum(ra * rb) / den) if den > 0 else float("nan")


def expected_log2(probs) -> np.ndarray:
    """Expected log2-speedup of each row under the bin midpoints of `workbench.bins`.

    Summed row by row (not a matrix product, whose blocking can round equal rows differently),
    so equal rows get bit-equal scores and ties stay ties."""
    p = np.asarray(probs, dtype=float)
    p = p / p.sum(axis=1, keepdims=True)
    return (p * np.asarray(bins.LOG2_MIDPOINTS)[None, :]).sum(axis=1)


def top_k_recovery(scores, speedups, groups: Sequence[Hashable], k: float = 0.10
                   ) -> dict[Hashable, float]:
    """Per pool (group): best measured speedup among the top ceil(k * n) by score / pool best.

    Ties in score keep the input order (stable sort), so the result is deterministic. In [0, 1];
    1.0 means the pool's best candidate was among those that would have been measured.
    """
    s = np.asarray(scores, dtype=float)
    v = np.asarray(speedups, dtype=float)
    g = list(groups)
    if not (len(s) == len(v) == len(g)):
        raise MetricInputError("scores, speedups and groups must have the same length")
    if not 0 < k <= 1:
        raise MetricInputError(f"k is a fraction in (0, 1], got {k}")
    if np.any(~np.isfinite(v)) or np.any(v <= 0):
        raise MetricInputError("speedups must be positive and finite (drop failed candidates)")
    out: dict[Hashable, float] = {}
    members: dict[Hashable, list[int]] = {}
    for i, key in enumerate(g):
        members.setdefault(key, []).append(i)
    for key, idx in members.items():
        ix = np.asarray(idx)
        n_top = max(1, math.ceil(k * len(ix) - 1e-9))
        order = ix[np.argsort(-s[ix], kind="stable")]
        out[key] = float(v[order[:n_top]].max() / v[ix].max())
    return out


def top_k_recovery_median(scores, speedups, groups, k: float = 0.10) -> float:
    """Median over pools of `top_k_recovery`."""
    rec = top_k_recovery(scores, speedups, groups, k)
    return float(np.median(list(rec.values())))


_LOG2_EDGES = np.log2(np.asarray(bins.EDGES))
#: The keys `problem_offsets` returns (and `summary` adds when it has groups).
OFFSET_KEYS = ("problem_offset_sd_log2", "within_problem_mad_log2", "oracle_offset_off_by_one")


def bins_of_log2(log2_speedups) -> np.ndarray:
    """Bin indices (0..7) of log2-speedups, vectorised `bins.bin_of` (closed on the right)."""
    return np.searchsorted(_LOG2_EDGES, np.asarray(log2_speedups, dtype=float), side="left")


def _errors(point_log2, measured_speedups, groups) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(point, log2 measured, groups as an object array), checked to be one non-zero length."""
    point = np.asarray(point_log2, dtype=float)
    measured = np.log2(np.asarray(measured_speedups, dtype=float))
    g = np.asarray(list(groups), dtype=object)
    if not (len(point) == len(measured) == len(g)) or len(g) == 0:
        raise MetricInputError(f"point_log2, measured_speedups and groups must have one equal, "
                               f"non-zero length, got {len(point)}, {len(measured)}, {len(g)}")
    return point, measured, g


def offsets_by_problem(point_log2, measured_speedups, groups: Sequence[Hashable]) -> dict:
    """Each problem's offset, in order of first appearance: the median of its rows' errors
    log2(measured) - forecast (octaves; > 0: its candidates are faster than forecast).
    Arguments as `problem_offsets`."""
    point, measured, g = _errors(point_log2, measured_speedups, groups)
    err = measured - point
    return {key: float(np.median(err[g == key])) for key in dict.fromkeys(g.tolist())}


def problem_offsets(point_log2, measured_speedups, groups: Sequence[Hashable]) -> dict[str, float]:
    """How much of a point forecast's error is one offset per problem (a pool of candidates).

    `point_log2` (n,): forecast log2-speedups (a median, or `expected_log2` of distributions);
    `measured_speedups` (n,); `groups` (n,): each row's problem. A problem's offset is the median
    of its errors log2(measured) - forecast (`offsets_by_problem`). Returns, in octaves (log2):
    `problem_offset_sd_log2` (sd of the offsets over problems), `within_problem_mad_log2` (median
    |error - own problem's offset|: what is left once the offset is removed), and
    `oracle_offset_off_by_one`: the off-by-one accuracy of the bins of forecast + own offset, an
    upper bound for any correction by one number per problem (from its measurements)."""
    point, measured, g = _errors(point_log2, measured_speedups, groups)
    offset = offsets_by_problem(point_log2, measured_speedups, groups)
    own = np.array([offset[key] for key in g.tolist()])
    truth = bins_of_log2(measured)
    return {"problem_offset_sd_log2": float(np.std(list(offset.values()))),
            "within_problem_mad_log2": float(np.median(np.abs(measured - point - own))),
            "oracle_offset_off_by_one": float(np.mean(np.abs(bins_of_log2(point + own) - truth) <= 1))}


def summary(probs, y, measured_speedups=None, groups=None, k: float = 0.10,
            predicted=None) -> dict[str, float]:
    """Every metric at once: accuracy, off_by_one, ece (of the `predicted` bins when given,
    else the argmax), brier, crps, nll, sharpness, and with measured speedups also spearman
    (expected vs measured log2) and, with groups, top10_recovery_median (named for k=0.10; `k`
    changes the fraction) and `problem_offsets` of the expected log2-speedups."""
    p, t = as_arrays(probs, y)
    out = {"n": float(len(t)), "accuracy": accuracy(p, t, predicted),
           "off_by_one": off_by_one_accuracy(p, t, predicted), "ece": ece(p, t, 10, predicted),
           "brier": brier(p, t), "crps": crps(p, t), "nll": nll(p, t), "sharpness": sharpness(p)}
    if measured_speedups is not None:
        sp = np.asarray(measured_speedups, dtype=float)
        score = expected_log2(p)
        out["spearman"] = spearman(score, np.log2(sp))
        if groups is not None:
            out["top10_recovery_median"] = top_k_recovery_median(score, sp, groups, k)
            out.update(problem_offsets(score, sp, groups))
    return out
