"""A selective threshold with a statistical risk guarantee (Learn-then-Test).

`ConformalRiskController(target_risk=alpha, delta=d)` picks, on a calibration split, the lowest
confidence threshold whose selective risk (loss rate among trusted forecasts) is <= alpha with
probability >= 1 - d over the draw of the calibration data, assuming calibration and future
forecasts are exchangeable (same problems mix, same forecaster, same GPU).

How: each threshold lambda of a fixed grid is a null hypothesis "selective risk at lambda >
alpha", tested with the exact binomial p-value P(Binom(n_lambda, alpha) <= k) (k errors among
the n_lambda covered calibration forecasts; given n_lambda, the covered losses are i.i.d.
Bernoulli with the selective risk). The hypotheses are tested by fixed-sequence testing from
several start points (Learn-then-Test's multi-start fixed sequence): `starts` start thresholds,
spread evenly in calibration coverage from the first testable one (covering `min_covered`
forecasts) to the one covering every forecast; from each start the scan goes down the grid at
its own level (the scan from the top gets `top_share` of delta, the others split the rest),
rejecting while p <= that level and stopping at its first failure. Each scan's family-wise
error is <= its level and the levels sum to delta, so by the union bound the chance that *any*
rejected threshold has risk > alpha is <= delta; the lowest rejected threshold is `threshold_`.

Why several starts: a single scan from the most confident forecast down stops at its first
failure, so a handful of confidently wrong forecasts at the top (one problem the forecaster
gets wrong with high confidence) blocks every threshold below them, even "trust everything"
when its error rate is far below the target. With several starts such a cluster costs only the
sequence that starts above it. With `starts=1` this is the single scan.

`min_covered` (default: the fewest forecasts that could pass the test at all, the least n with
(1 - alpha)^n <= the first scan's level) places the first start: thresholds covering fewer cannot be
certified. The start points depend on the calibration confidences alone, not on the losses. If
no threshold is certified, `threshold_` is +inf and every forecast is deferred. The guarantee is
on the *rate* of errors among trusted forecasts; it says nothing when the data drifts (a new
GPU, new problems).
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy import stats

from workbench.calibration.errors import MetricInputError
from workbench.calibration.selective import Loss, SelectivePolicy, coverage_and_risk
from workbench.records import Forecast, Measurement


def binomial_p_value(errors: int, n: int, alpha: float) -> float:
    """P(Binom(n, alpha) <= errors): small when `errors` out of `n` is implausible under risk alpha.

    1.0 when n == 0 (nothing to test)."""
    if n <= 0:
        return 1.0
    return float(stats.binom.cdf(errors, n, alpha))


def clopper_pearson_upper(errors: int, n: int, delta: float) -> float:
    """One-sided (1 - delta) Clopper-Pearson upper bound on a rate from `errors` of `n`."""
    if n <= 0 or errors >= n:
        return 1.0
    return float(stats.beta.ppf(1.0 - delta, errors + 1, n - errors))


class ConformalRiskController(SelectivePolicy):
    """Pick the lowest threshold certified to keep selective risk <= `target_risk` w.p. >= 1 - delta.

    Parameters: `target_risk` (alpha, in (0, 1)), `delta` (in (0, 1)), `score` (a confidence
    score of `workbench.calibration.selective`), `loss` ("bin", "off_by_more_than_one" or a
    callable), `grid` (number of equal steps of the threshold grid over [0, 1]), `starts`
    (start points of the fixed-sequence scans, >= 1; see the module doc; None = the class's
    `default_starts`, 1 being the single scan of the earlier controller), `top_share` (the
    share of delta given to the scan from the top, see `levels`), `min_covered` (where the
    first scan starts; None = the smallest testable count at that scan's level).

    Learned attributes after `calibrate`: `threshold_`, `thresholds_` (the grid, high to low),
    `p_values_` (NaN where not tested), `certified_` (bool per grid threshold: rejected by
    some scan), `starts_` (grid indices where the scans started), `levels_` (each scan's
    level; they sum to delta), `coverage_`, `risk_` and `upper_bound_` (Clopper-Pearson
    (1 - delta) upper bound of the risk at `threshold_`) on the calibration data,
    `n_calibration_`.
    """

    #: Scans when `starts` is None.
    default_starts: int = 8

    def __init__(self, target_risk: float = 0.2, delta: float = 0.1, score: str = "maxprob",
                 loss: Loss = "bin", grid: int = 200, min_covered: int | None = None,
                 starts: int | None = None, top_share: float = 0.5):
        starts = self.default_starts if starts is None else starts
        if not 0 < target_risk < 1:
            raise MetricInputError(f"target_risk is a rate in (0, 1), got {target_risk}")
        if not 0 < delta < 1:
            raise MetricInputError(f"delta is a probability in (0, 1), got {delta}")
        if grid < 1 or starts < 1 or (min_covered is not None and min_covered < 1):
            raise MetricInputError("grid, starts and min_covered must be at least 1")
        if not 0 < top_share <= 1:
            raise MetricInputError(f"top_share is a share of delta in (0, 1], got {top_share}")
        self.target_risk = target_risk
        self.delta = delta
        self.score = score
        self.loss = loss
        self.grid = grid
        self.starts = starts
        self.top_share = top_share
        self.min_covered = min_covered
        self._check_score()

    @staticmethod
    def smallest_testable_n(alpha: float, delta: float) -> int:
        """Fewest covered forecasts whose error-free record can certify risk <= alpha:
        the least n with (1 - alpha)^n <= delta."""
        return max(1, math.ceil(math.log(delta) / math.log(1.0 - alpha) - 1e-12))

    def levels(self, n_starts: int) -> list[float]:
        """The level of each scan (summing to delta): the first, from the most confident
        forecasts down, gets `top_share` of delta (with a risk that falls as confidence rises,
        the usual case, it is the one that certifies); the others share the rest evenly."""
        if n_starts <= 1:
            return [self.delta] * n_starts
        rest = self.delta * (1.0 - self.top_share) / (n_starts - 1)
        return [self.delta * self.top_share] + [rest] * (n_starts - 1)

    def _start_indices(self, covered_counts: np.ndarray, n_finite: int) -> list[int]:
        """Grid indices where the scans start: the first grid threshold reaching each of
        `starts` coverage counts spread evenly from the first testable count to all finite
        confidences (duplicates dropped). Uses the confidences only."""
        first = self.min_covered or self.smallest_testable_n(self.target_risk, self.levels(self.starts)[0])
        if n_finite < first:
            return []
        goals = np.linspace(first, n_finite, self.starts) if self.starts > 1 else np.array([first])
        out: list[int] = []
        for goal in np.ceil(goals - 1e-9).astype(int):
            j = int(np.searchsorted(covered_counts, goal, side="left"))  # counts rise down the grid
            if j < len(covered_counts) and j not in out:
                out.append(j)
        return out

    def calibrate_arrays(self, conf, loss_values) -> "ConformalRiskController":
        """Calibrate from confidences (n,) and 0/1 losses (n,) directly."""
        c = np.asarray(conf, dtype=float)
        e = np.asarray(loss_values, dtype=float)
        if c.shape != e.shape or c.ndim != 1 or len(c) == 0:
            raise MetricInputError("need equal-length, non-empty 1-D confidence and loss arrays")
        grid = np.linspace(1.0, 0.0, self.grid + 1)
        # Covered count and summed loss at every grid threshold from one sort (c >= lambda).
        order = np.argsort(c, kind="stable")
        c_sorted = c[order]
        tail_loss = np.concatenate([np.cumsum(e[order][::-1])[::-1], [0.0]])  # loss of rows i..n-1
        first = np.searchsorted(c_sorted, grid, side="left")
        counts = len(c) - first
        errors = np.rint(tail_loss[first]).astype(int)
        starts = self._start_indices(counts, int(np.isfinite(c).sum()))
        levels = self.levels(len(starts))
        p_values = np.full(len(grid), np.nan)
        certified = np.zeros(len(grid), dtype=bool)
        for start, level in zip(starts, levels):
            for j in range(start, len(grid)):
                if np.isnan(p_values[j]):
                    p_values[j] = binomial_p_value(int(errors[j]), int(counts[j]), self.target_risk)
                if p_values[j] > level:
                    break
                certified[j] = True
        chosen = float(grid[np.nonzero(certified)[0][-1]]) if certified.any() else float("inf")
        self.thresholds_ = grid
        self.p_values_ = p_values
        self.certified_ = certified
        self.starts_ = starts
        self.levels_ = levels
        self.threshold_ = chosen
        self.coverage_, self.risk_ = coverage_and_risk(c, e, chosen)
        n_cov = int((c >= chosen).sum())
        self.upper_bound_ = clopper_pearson_upper(int(round(self.risk_ * n_cov)), n_cov, self.delta)
        self.n_calibration_ = len(c)
        return self

    def calibrate(self, forecasts: Sequence[Forecast], measurements: Sequence[Measurement]
                  ) -> "ConformalRiskController":
        """Calibrate on forecasts paired with ok measurements of the same candidate and GPU."""
        conf, err = self._arrays(forecasts, measurements)
        return self.calibrate_arrays(conf, err)
