"""Selective prediction: trust confident forecasts, defer unsure ones to the GPU.

Confidence scores (all in [0, 1], higher = more confident):
- "maxprob": probability of the most probable bin (>= 1/8);
- "entropy": normalised negative entropy, 1 - H(p) / log 8 (0 for uniform, 1 for one-hot);
- "margin": top-1 minus top-2 probability.

A forecast is *covered* (trusted) when its confidence is >= the threshold. Coverage is the
fraction covered; selective risk is the mean loss among the covered (0 when nothing is covered,
by convention). The default loss is the bin error (predicted bin != true bin);
"off_by_more_than_one" and any callable `loss(pred_bins, true_bins) -> 0/1 array` also work.
Abstained forecasts have confidence -inf: they are never covered and always deferred.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Literal, Sequence, Union

import numpy as np

from workbench import bins
from workbench.calibration.errors import MetricInputError
from workbench.errors import NotFittedError
from workbench.records import Forecast, Measurement

SCORES = ("maxprob", "entropy", "margin")
Decision = Literal["trust", "defer"]
Loss = Union[str, Callable[[np.ndarray, np.ndarray], np.ndarray]]


def confidence(probs, score: str = "maxprob") -> np.ndarray:
    """Confidence of each row of an (n, 8) probability array under `score` (see module doc)."""
    p = np.atleast_2d(np.asarray(probs, dtype=float))
    p = p / p.sum(axis=1, keepdims=True)
    if score == "maxprob":
        return p.max(axis=1)
    if score == "entropy":
        with np.errstate(divide="ignore", invalid="ignore"):
            h = -np.sum(np.where(p > 0, p * np.log(p), 0.0), axis=1)
        return 1.0 - h / math.log(p.shape[1])
    if score == "margin":
        top2 = np.sort(p, axis=1)[:, -2:]
        return top2[:, 1] - top2[:, 0]
    raise MetricInputError(f"unknown confidence score {score!r}; use one of {', '.join(SCORES)}")


def forecast_confidence(forecast: Forecast, score: str = "maxprob") -> float:
    """Confidence of one forecast; -inf for an abstention (never trusted)."""
    if forecast.abstained:
        return float("-inf")
    return float(confidence([forecast.probabilities], score)[0])


def losses(probs, y, loss: Loss = "bin") -> np.ndarray:
    """Per-row 0/1 loss of the predicted (argmax) bin against the true bin."""
    p = np.asarray(probs, dtype=float)
    pred = p.argmax(axis=1)
    t = np.asarray(y, dtype=int)
    if callable(loss):
        return np.asarray(loss(pred, t), dtype=float)
    if loss == "bin":
        return (pred != t).astype(float)
    if loss == "off_by_more_than_one":
        return (np.abs(pred - t) > 1).astype(float)
    raise MetricInputError(f"unknown loss {loss!r}; use 'bin', 'off_by_more_than_one' or a callable")


@dataclass(frozen=True)
class RiskCoverage:
    """A risk-coverage curve: one point per distinct confidence value, from high to low.

    At point j every row with confidence >= `thresholds[j]` is covered; `coverage[j]` is their
    share of all n rows and `risk[j]` their mean loss. Coverage rises to the share of rows with
    finite confidence (1.0 without abstentions).
    """

    thresholds: np.ndarray
    coverage: np.ndarray
    risk: np.ndarray
    n: int

    @property
    def aurc(self) -> float:
        """Area under the risk-coverage curve, sum_j risk[j] * (coverage[j] - coverage[j-1]).

        Without ties this equals the usual (1/n) * sum_k risk(top k rows)."""
        if len(self.coverage) == 0:
            return float("nan")
        dc = np.diff(np.concatenate([[0.0], self.coverage]))
        return float(np.sum(self.risk * dc))

    @property
    def aurc_trapezoid(self) -> float:
        """Area under the curve by the trapezoid rule between consecutive points, from the first
        point (no coverage-0 point, as the GPU Forecasters study computes it); NaN with fewer
        than 2 points. `aurc` is the step rule."""
        if len(self.coverage) < 2:
            return float("nan")
        return float(np.sum(0.5 * (self.risk[1:] + self.risk[:-1]) * np.diff(self.coverage)))

    def risk_at(self, coverage: float) -> float:
        """Selective risk at the first point whose coverage reaches `coverage` (NaN if none)."""
        hit = np.nonzero(self.coverage >= coverage - 1e-12)[0]
        return float(self.risk[hit[0]]) if len(hit) else float("nan")


def risk_coverage(conf, loss_values) -> RiskCoverage:
    """The risk-coverage curve of confidences `conf` (n,) and 0/1 (or [0,1]) losses (n,)."""
    c = np.asarray(conf, dtype=float)
    e = np.asarray(loss_values, dtype=float)
    if c.shape != e.shape or c.ndim != 1:
        raise MetricInputError("confidence and losses must be 1-D arrays of the same length")
    n = len(c)
    finite = np.isfinite(c)
    c, e = c[finite], e[finite]
    if len(c) == 0:
        return RiskCoverage(np.array([]), np.array([]), np.array([]), n)
    order = np.argsort(-c, kind="stable")
    cs, es = c[order], e[order]
    cum = np.cumsum(es)
    # The last index of each run of equal confidence is where that threshold's coverage ends.
    last = np.nonzero(np.append(cs[1:] != cs[:-1], True))[0]
    covered = last + 1
    return RiskCoverage(thresholds=cs[last], coverage=covered / n, risk=cum[last] / covered, n=n)


def regret_curve(conf, scores, speedups, groups: Sequence) -> RiskCoverage:
    """Risk-coverage curve of the regret of a selective screen, in octaves (log2).

    At a threshold, each problem's (group's) rows with confidence >= it are trusted and the others
    deferred to the GPU. Every deferred row is measured; of the trusted rows only the one with
    the highest score (the first in input order on ties) is. The problem's regret is
    log2(pool best / best measured), 0 when the best was measured; the risk is the mean over all
    problems. So the risk is 0 at coverage 0 and, with everything trusted, the regret of
    measuring each problem's top-scored row alone. Points as in `risk_coverage`."""
    c = np.asarray(conf, dtype=float)
    s = np.asarray(scores, dtype=float)
    v = np.asarray(speedups, dtype=float)
    g = list(groups)
    if not (c.shape == s.shape == v.shape == (len(g),)) or c.ndim != 1:
        raise MetricInputError("conf, scores, speedups and groups must be 1-D of one length")
    if np.any(~np.isfinite(v)) or np.any(v <= 0):
        raise MetricInputError("speedups must be positive and finite (drop failed candidates)")
    n = len(c)
    keys = {k: i for i, k in enumerate(dict.fromkeys(g))}
    pid = np.asarray([keys[k] for k in g], dtype=int)
    n_groups = len(keys)
    finite = np.flatnonzero(np.isfinite(c))
    if len(finite) == 0:
        return RiskCoverage(np.array([]), np.array([]), np.array([]), n)
    order = finite[np.argsort(-c[finite], kind="stable")]
    lv = np.log2(v)
    best = np.full(n_groups, -np.inf)
    np.maximum.at(best, pid, lv)
    # suffix maxima of each group's rows in coverage order: what stays deferred after k covered
    rows_of: list[list[int]] = [[] for _ in range(n_groups)]
    for i in order:
        rows_of[pid[i]].append(i)
    deferred_max = []
    for p in range(n_groups):
        rest = [lv[i] for i in rows_of[p]]
        suffix = np.full(len(rest) + 1, -np.inf)
        for k in range(len(rest) - 1, -1, -1):
            suffix[k] = max(suffix[k + 1], rest[k])
        # rows never covered (abstentions) stay deferred at every threshold
        never = lv[(pid == p) & ~np.isfinite(c)]
        deferred_max.append(np.maximum(suffix, never.max() if len(never) else -np.inf))
    covered = np.zeros(n_groups, dtype=int)
    top_score = np.full(n_groups, -np.inf)
    top_value = np.full(n_groups, -np.inf)
    regret = np.zeros(n_groups)
    total = 0.0
    risks = np.empty(len(order))
    for j, i in enumerate(order):
        p = pid[i]
        covered[p] += 1
        if s[i] > top_score[p] or covered[p] == 1:
            top_score[p], top_value[p] = s[i], lv[i]
        new = best[p] - max(deferred_max[p][covered[p]], top_value[p])
        total += new - regret[p]
        regret[p] = new
        risks[j] = total / n_groups
    cs = c[order]
    last = np.nonzero(np.append(cs[1:] != cs[:-1], True))[0]
    return RiskCoverage(thresholds=cs[last], coverage=(last + 1) / n, risk=risks[last], n=n)


def aurc(probs, y, score: str = "maxprob", loss: Loss = "bin") -> float:
    """AURC of forecasts `probs` against true bins `y` under a confidence score and loss."""
    return risk_coverage(confidence(probs, score), losses(probs, y, loss)).aurc


def selective_risk_at_coverage(probs, y, coverage: float, score: str = "maxprob",
                               loss: Loss = "bin") -> float:
    """Selective risk when trusting the most confident `coverage` share of forecasts."""
    return risk_coverage(confidence(probs, score), losses(probs, y, loss)).risk_at(coverage)


def coverage_and_risk(conf, loss_values, threshold: float) -> tuple[float, float]:
    """(coverage, selective risk) when trusting rows with confidence >= threshold.

    Risk is 0.0 when nothing is covered."""
    c = np.asarray(conf, dtype=float)
    e = np.asarray(loss_values, dtype=float)
    if len(c) == 0:
        return 0.0, 0.0
    covered = c >= threshold
    k = int(covered.sum())
    return k / len(c), float(e[covered].mean()) if k else 0.0


# --------------------------------------------------------------------------- records -> arrays
def labelled(forecasts: Sequence[Forecast], measurements: Sequence[Measurement]
             ) -> tuple[list[Forecast], np.ndarray]:
    """Pair reference-relative forecasts with ok measurements of the same candidate and GPU.

    Returns the forecasts that have a measured speedup and their true bin indices; forecasts
    without one (failed or unmeasured candidates) are dropped, as the study does.
    """
    truth = {(m.candidate_id, m.hardware_key): m.bin for m in measurements if m.bin is not None}
    kept, ys = [], []
    for f in forecasts:
        if f.relative_to != "reference":
            raise MetricInputError(
                "labelled() scores reference-relative forecasts; for parent-relative ones "
                "compute the child/parent bin yourself (workbench.evaluate does)")
        b = truth.get((f.candidate_id, f.hardware_key))
        if b is not None:
            kept.append(f)
            ys.append(b)
    return kept, np.asarray(ys, dtype=int)


def probabilities(forecasts: Sequence[Forecast]) -> np.ndarray:
    """(n, 8) array of the forecasts' probabilities."""
    if not forecasts:
        return np.zeros((0, bins.N_BINS))
    return np.asarray([f.probabilities for f in forecasts], dtype=float)


def forecast_confidences(forecasts: Sequence[Forecast], score: str) -> np.ndarray:
    return np.asarray([forecast_confidence(f, score) for f in forecasts], dtype=float)


# --------------------------------------------------------------------------- policies
class SelectivePolicy:
    """Base of threshold policies: `calibrate(forecasts, measurements)` then `decide(forecast)`.

    Subclasses set `threshold_` (and the other attributes ending in `_`) in `calibrate`.
    """

    score: str
    loss: Loss

    def _check_score(self) -> None:
        if self.score not in SCORES:
            raise MetricInputError(f"unknown confidence score {self.score!r}; "
                                   f"use one of {', '.join(SCORES)}")

    def _require_fitted(self) -> None:
        if not hasattr(self, "threshold_"):
            raise NotFittedError(f"{type(self).__name__} is not calibrated yet; call "
                                 "calibrate(forecasts, measurements) first")

    def _arrays(self, forecasts, measurements) -> tuple[np.ndarray, np.ndarray]:
        kept, y = labelled(forecasts, measurements)
        if not kept:
            raise MetricInputError("no forecast has an ok measurement of the same candidate and "
                                   "GPU; calibrate on measured candidates")
        conf = forecast_confidences(kept, self.score)
        err = losses(probabilities(kept), y, self.loss)
        # An abstention is never covered, whatever its uniform probabilities say.
        return conf, err

    def calibrate_arrays(self, conf, loss_values) -> "SelectivePolicy":  # pragma: no cover - abstract
        raise NotImplementedError

    def calibrate_with(self, prior: tuple[np.ndarray, np.ndarray] | None,
                       forecasts: Sequence[Forecast] = (), measurements: Sequence[Measurement] = ()
                       ) -> "SelectivePolicy":
        """Calibrate on `prior` ((n, 8) bin probabilities, (n,) true bins: held-out forecasts,
        e.g. a learned forecaster's `calibration_set()`) together with forecasts paired with ok
        measurements (e.g. a search's own); either part may be empty, not both."""
        conf, err = [], []
        if prior is not None and len(prior[0]):
            probs = np.asarray(prior[0], dtype=float)
            conf.append(confidence(probs, self.score))
            err.append(losses(probs, prior[1], self.loss))
        if forecasts and labelled(forecasts, measurements)[0]:
            c, e = self._arrays(forecasts, measurements)
            conf.append(c)
            err.append(e)
        if not conf:
            raise MetricInputError("nothing to calibrate on: give held-out forecasts or forecasts "
                                   "with ok measurements")
        return self.calibrate_arrays(np.concatenate(conf), np.concatenate(err))

    def decide(self, forecast: Forecast) -> Decision:
        """"trust" when the forecast's confidence reaches the threshold, else "defer".

        Abstentions always defer."""
        self._require_fitted()
        if forecast.abstained:
            return "defer"
        return "trust" if forecast_confidence(forecast, self.score) >= self.threshold_ else "defer"

    def coverage_risk(self, forecasts: Sequence[Forecast], measurements: Sequence[Measurement]
                      ) -> tuple[float, float]:
        """(coverage, selective risk) of the calibrated threshold on other labelled data."""
        self._require_fitted()
        conf, err = self._arrays(forecasts, measurements)
        return coverage_and_risk(conf, err, self.threshold_)


class ThresholdPolicy(SelectivePolicy):
    """Trust forecasts whose confidence score is >= a threshold.

    Give `threshold` to fix it, or `coverage` to pick, on the calibration data, the highest
    threshold that covers at least that share. Learned attributes after `calibrate`:
    `threshold_`, `coverage_` and `risk_` (on the calibration data), `n_calibration_`.
    """

    def __init__(self, score: str = "maxprob", threshold: float | None = None,
                 coverage: float | None = None, loss: Loss = "bin"):
        if (threshold is None) == (coverage is None):
            raise MetricInputError("give exactly one of threshold= or coverage=")
        if coverage is not None and not 0 < coverage <= 1:
            raise MetricInputError(f"coverage is a fraction in (0, 1], got {coverage}")
        self.score = score
        self.threshold = threshold
        self.coverage = coverage
        self.loss = loss
        self._check_score()

    def calibrate(self, forecasts: Sequence[Forecast], measurements: Sequence[Measurement]
                  ) -> "ThresholdPolicy":
        return self.calibrate_arrays(*self._arrays(forecasts, measurements))

    def calibrate_arrays(self, conf, loss_values) -> "ThresholdPolicy":
        """Calibrate from confidences (n,) and 0/1 losses (n,) directly."""
        conf, err = np.asarray(conf, dtype=float), np.asarray(loss_values, dtype=float)
        if conf.shape != err.shape or conf.ndim != 1 or len(conf) == 0:
            raise MetricInputError("need equal-length, non-empty 1-D confidence and loss arrays")
        if self.threshold is not None:
            thr = float(self.threshold)
        else:
            curve = risk_coverage(conf, err)
            hit = np.nonzero(curve.coverage >= self.coverage - 1e-12)[0]
            if len(curve.thresholds) == 0:  # every forecast abstained: trust nothing
                thr = float("inf")
            else:
                thr = float(curve.thresholds[hit[0]] if len(hit) else curve.thresholds[-1])
        self.threshold_ = thr
        self.coverage_, self.risk_ = coverage_and_risk(conf, err, thr)
        self.n_calibration_ = len(conf)
        return self
