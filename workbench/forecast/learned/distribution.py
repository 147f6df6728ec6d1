"""From a median to bin probabilities: the out-of-fold residual distribution and its temperature.

`ResidualDistribution().calibrate(oof_medians, log2s, y, splits)` keeps a median model's
*out-of-fold* log2 errors (folds grouped by problem, so they are the errors it makes on unseen
problems) and turns any median into a predictive distribution: P(bin) = share of residuals r
with median + r in that bin. The distribution is ordinal by construction, so neighbouring bins
get mass together. A temperature T sharpens or flattens it (p ∝ p^(1/T)); T is fitted on
out-of-fold bin probabilities in which each fold's rows get the other folds' residuals, so that
(objective "match") the mean confidence (max probability) equals the accuracy there.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy.optimize import minimize_scalar

from workbench import bins
from workbench.errors import ConfigError, NotFittedError

MID = np.asarray(bins.LOG2_MIDPOINTS)
LOG2_EDGES = np.log2(np.asarray(bins.EDGES))
#: Temperature objectives: "match" (mean max-probability = accuracy), or the T minimising the
#: NLL, the Brier score or the ECE (10 buckets).
OBJECTIVES = ("match", "nll", "brier", "ece")


def nll_temperature(logp: np.ndarray, y: np.ndarray) -> float:
    """Temperature minimising the NLL of softmax(logp / T) at the true classes, T in [0.05, 20]."""
    def nll(log_t: float) -> float:
        z = logp / math.exp(log_t)
        z = z - z.max(axis=1, keepdims=True)
        lse = np.log(np.exp(z).sum(axis=1))
        return float(np.mean(lse - z[np.arange(len(y)), y]))
    res = minimize_scalar(nll, bounds=(math.log(0.05), math.log(20.0)), method="bounded")
    return float(math.exp(res.x))


def sharpen(p: np.ndarray, temperature: float) -> np.ndarray:
    """p ∝ p^(1/T), row-wise."""
    z = np.log(p) / temperature
    z = np.exp(z - z.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


def temperature_for(p: np.ndarray, y: np.ndarray, objective: str) -> float:
    """Temperature T in [0.2, 5] for sharpen(p, T) at the true bins `y`.

    "match": mean max-probability equals the accuracy (a smooth, monotone condition in T:
    the overall confidence gap of the reliability diagram is closed); "nll" (T in [0.05, 20]),
    "brier", "ece" (10 buckets): the T minimising that score."""
    from workbench.calibration import metrics

    if objective == "nll":
        return nll_temperature(np.log(p), y)
    if objective == "match":
        acc = float(np.mean(p.argmax(axis=1) == y))

        def loss(log_t: float) -> float:
            return (float(np.mean(sharpen(p, math.exp(log_t)).max(axis=1))) - acc) ** 2
    else:
        score = metrics.brier if objective == "brier" else metrics.ece

        def loss(log_t: float) -> float:
            return float(score(sharpen(p, math.exp(log_t)), y))

    res = minimize_scalar(loss, bounds=(math.log(0.2), math.log(5.0)), method="bounded")
    return float(math.exp(res.x))


def residual_bin_probabilities(median: np.ndarray, residuals: np.ndarray,
                               floor: float = 0.002) -> np.ndarray:
    """(n, 8) bin probabilities of log2-speedup = median_i + r, r drawn from `residuals`
    (the empirical out-of-fold errors); every bin gets at least `floor` before renormalising."""
    v = np.asarray(median, float)[:, None] + np.asarray(residuals, float)[None, :]
    b = np.searchsorted(LOG2_EDGES, v, side="left")  # closed on the right, as bins.bin_of
    p = np.stack([(b == k).mean(axis=1) for k in range(bins.N_BINS)], axis=1)
    p = np.maximum(p, floor)
    return p / p.sum(axis=1, keepdims=True)


def relative_distribution(p_child, p_parent, width: float = 0.5) -> np.ndarray:
    """Bin distribution of child/parent speedup from two reference-relative distributions.

    log2(child/parent) = log2 S_child - log2 S_parent, assumed independent. Each pair of bins
    contributes p_child[i] * p_parent[j] at (mid_i - mid_j) spread uniformly over `width`
    octaves (so mass at exactly 1.0x splits between the bins either side of the edge).
    """
    pc, pp = np.asarray(p_child, float), np.asarray(p_parent, float)
    pc, pp = pc / pc.sum(), pp / pp.sum()
    d = (MID[:, None] - MID[None, :]).ravel()
    w = (pc[:, None] * pp[None, :]).ravel()
    lo, hi = d - width / 2, d + width / 2
    edges = np.concatenate([[-np.inf], LOG2_EDGES, [np.inf]])
    out = np.zeros(bins.N_BINS)
    for b in range(bins.N_BINS):
        overlap = np.clip(np.minimum(hi, edges[b + 1]) - np.maximum(lo, edges[b]), 0, None)
        out[b] = float(np.sum(w * overlap / width))
    return out / out.sum()


def fold_index(splits: Sequence[tuple[np.ndarray, np.ndarray]], n: int) -> np.ndarray:
    """(n,) the index of the fold whose test part holds each row."""
    fold_of = np.zeros(n, dtype=int)
    for k, (_, te) in enumerate(splits):
        fold_of[te] = k
    return fold_of


class ResidualDistribution:
    """Bin probabilities of medians from a median model's out-of-fold residuals (module doc).

    Learned attributes: `residuals_` ((m,) log2 errors), `temperature_`, and the calibration
    set `calibration_probs_` / `calibration_bins_` (the training rows' out-of-fold calibrated
    probabilities and measured bins; empty after `fit_in_sample`). `X` arguments are accepted
    for subclasses whose spread depends on the features; this one ignores them.
    """

    def __init__(self, objective: str = "match"):
        if objective not in OBJECTIVES:
            raise ConfigError(f"calibration_objective is one of {', '.join(OBJECTIVES)}, "
                              f"got {objective!r}")
        self.objective = objective

    def calibrate(self, oof_medians: np.ndarray, log2s: np.ndarray, y: np.ndarray,
                  splits: Sequence[tuple[np.ndarray, np.ndarray]],
                  X: np.ndarray | None = None) -> "ResidualDistribution":
        """Keep the residuals log2s - oof_medians and fit the temperature; returns self.

        `oof_medians`: each training row's median from a model fitted without its fold;
        `y`: the rows' measured bins; `splits`: the (train, test) index pairs of those folds.
        The temperature is fitted on bin probabilities in which each fold's rows get the
        residuals of the *other* folds only (a row's own error never widens or narrows its
        own distribution)."""
        res = log2s - oof_medians
        self.residuals_ = res
        p = self.oof_probabilities(oof_medians, res, splits, fold_index(splits, len(res)), X)
        t = temperature_for(p, y, self.objective)
        self.temperature_ = t
        self._keep(sharpen(p, t), y)
        return self

    def fit_in_sample(self, residuals: np.ndarray) -> "ResidualDistribution":
        """Without folds (fewer than 2 training problems): in-sample residuals, T = 1, no
        calibration set; returns self."""
        self.residuals_ = residuals
        self.temperature_ = 1.0
        self._keep(np.zeros((0, bins.N_BINS)), np.zeros(0))
        return self

    def oof_probabilities(self, oof: np.ndarray, res: np.ndarray, splits: Sequence,
                          fold_of: np.ndarray, X: np.ndarray | None = None) -> np.ndarray:
        """(n, 8) uncalibrated out-of-fold bin probabilities: each fold's rows get their
        out-of-fold medians `oof` plus the residuals `res` of the other folds."""
        p = np.zeros((len(oof), bins.N_BINS))
        for k, (_, te) in enumerate(splits):
            p[te] = residual_bin_probabilities(oof[te], res[fold_of != k])
        return p

    def predict_proba(self, medians: np.ndarray, X: np.ndarray | None = None) -> np.ndarray:
        """(n, 8) calibrated bin probabilities of (n,) log2 medians."""
        if not hasattr(self, "residuals_"):
            raise NotFittedError("ResidualDistribution is not calibrated; call calibrate(...) first")
        return sharpen(residual_bin_probabilities(medians, self.residuals_), self.temperature_)

    def _keep(self, probs: np.ndarray, y: np.ndarray) -> None:
        self.calibration_probs_ = np.asarray(probs, dtype=np.float32)
        self.calibration_bins_ = np.asarray(y, dtype=np.int8)

    def calibration_set(self) -> tuple[np.ndarray, np.ndarray] | None:
        """((n, 8) out-of-fold calibrated probabilities, (n,) measured bins), or None if empty."""
        probs = getattr(self, "calibration_probs_", None)
        if probs is None or len(probs) == 0:
            return None
        return np.asarray(probs, dtype=float), np.asarray(self.calibration_bins_, dtype=int)
