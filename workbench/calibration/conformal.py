"""A selective threshold with a statistical risk guarantee (Learn-then-Test).

`ConformalRiskController(target_risk=alpha, delta=d)` picks, on a calibration split, the lowest
confidence threshold whose selective risk (loss rate among trusted forecasts) is <= alpha with
probability >= 1 - d over the draw of the calibration data, assuming calibration and future
forecasts are exchangeable (same problems mix, same forecaster, same GPU).

How: for each threshold lambda on a fixed grid scanned from high to low, test the null
"selective risk at lambda > alpha" with the exact binomial p-value P(Binom(n_lambda, alpha) <= k)
(k errors among the n_lambda covered calibration forecasts; given n_lambda, the covered losses
are i.i.d. Bernoulli with the selective risk). Fixed-sequence testing rejects while p <= delta
and stops at the first failure; the family-wise error is then <= delta, so every rejected
threshold, the lowest included, is safe with probability >= 1 - delta.

The scan starts at the first grid threshold that covers at least `min_covered` calibration
forecasts (default: the fewest that could pass the test at all, the least n with
(1 - alpha)^n <= delta); thresholds covering fewer cannot be certified and would only stop the
scan before it reaches testable ones. The start depends on the calibration confidences alone,
not on the losses. If no threshold is
certified, `threshold_` is +inf and every forecast is deferred. The guarantee is on the *rate* of
errors among trusted forecasts; it says nothing when the data drifts (a new GPU, new problems).
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
    callable), `grid` (number of equal steps of the threshold grid over [0, 1]), `min_covered`
(where the scan starts, see the module doc; None = the smallest testable count).

    Learned attributes after `calibrate`: `threshold_`, `thresholds_` (the grid, high to low),
    `p_values_` (NaN where not tested), `coverage_`, `risk_` and `upper_bound_` (Clopper-Pearson
    (1 - delta) upper bound of the risk at `threshold_`) on the calibration data,
    `n_calibration_`.
    """

    def __init__(self, target_risk: float = 0.2, delta: float = 0.1, score: str = "maxprob",
                 loss: Loss = "bin", grid: int = 200, min_covered: int | None = None):
        if not 0 < target_risk < 1:
            raise MetricInputError(f"target_risk is a rate in (0, 1), got {target_risk}")
        if not 0 < delta < 1:
            raise MetricInputError(f"delta is a probability in (0, 1), got {delta}")
        if grid < 1 or (min_covered is not None and min_covered < 1):
            raise MetricInputError("grid and min_covered must be at least 1")
        self.target_risk = target_risk
        self.delta = delta
        self.score = score
        self.loss = loss
        self.grid = grid
        self.min_covered = min_covered
        self._check_score()

    @staticmethod
    def smallest_testable_n(alpha: float, delta: float) -> int:
        """Fewest covered forecasts whose error-free record can certify risk <= alpha:
        the least n with (1 - alpha)^n <= delta."""
        return max(1, math.ceil(math.log(delta) / math.log(1.0 - alpha) - 1e-12))

    def calibrate_arrays(self, conf, loss_values) -> "ConformalRiskController":
        """Calibrate from confidences (n,) and 0/1 losses (n,) directly."""
        c = np.asarray(conf, dtype=float)
        e = np.asarray(loss_values, dtype=float)
        if c.shape != e.shape or c.ndim != 1 or len(c) == 0:
            raise MetricInputError("need equal-length, non-empty 1-D confidence and loss arrays")
        grid = np.linspace(1.0, 0.0, self.grid + 1)
        min_covered = self.min_covered or self.smallest_testable_n(self.target_risk, self.delta)
        p_values = np.full(len(grid), np.nan)
        chosen = float("inf")
        started = False
        for j, lam in enumerate(grid):
            covered = c >= lam
            n = int(covered.sum())
            if not started and n < min_covered:
                continue
            started = True
            k = int(round(float(e[covered].sum())))
            p_values[j] = binomial_p_value(k, n, self.target_risk)
            if p_values[j] > self.delta:
                break
            chosen = float(lam)
        self.thresholds_ = grid
        self.p_values_ = p_values
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
