"""The median regressor of the learned forecaster: log2-speedup relative to a share of the roofline.

`MedianRegressor(ideal_offset).fit(X, log2s).predict(X)`: a `HistGradientBoostingRegressor` with
an absolute-error loss (the median) on log2-speedup minus `ideal_offset` x the roofline's ideal
log2-speedup (`log2_ideal_speedup`, a feature computed for each GPU from its own peaks). The
trees learn how far a candidate falls short of a shrunk roofline bound, so a problem outside the
training range follows the roofline instead of a tree's flat extrapolation.
"""
from __future__ import annotations

import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor

from workbench.errors import ConfigError, NotFittedError
from workbench.forecast.learned.reference import IDEAL

#: Shares of the ideal log2-speedup that variant selection (`select_variant`) chooses among.
OFFSET_GRID = (0.25, 0.5, 0.75, 1.0)


class MedianRegressor:
    """Median log2-speedup of feature rows (columns as `FEATURE_NAMES`).

    `ideal_offset` (dimensionless, >= 0): the share of `log2_ideal_speedup` the target is taken
    relative to (added back by `predict`). `min_samples_leaf` bounds the rows of a leaf, capped
    at max(20, rows / 20) so small training sets still split. Learned attribute: `model_`.
    """

    def __init__(self, ideal_offset: float, max_iter: int = 100, learning_rate: float = 0.1,
                 max_leaf_nodes: int = 15, min_samples_leaf: int = 100, seed: int = 0):
        if ideal_offset < 0 or min_samples_leaf < 1:
            raise ConfigError(f"ideal_offset must be >= 0 and min_samples_leaf >= 1, "
                              f"got {ideal_offset!r} and {min_samples_leaf}")
        self.ideal_offset = float(ideal_offset)
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.max_leaf_nodes = max_leaf_nodes
        self.min_samples_leaf = min_samples_leaf
        self.seed = seed

    def new_model(self, n_rows: int) -> HistGradientBoostingRegressor:
        """An unfitted regressor with this one's settings for a training set of `n_rows`."""
        leaf = min(self.min_samples_leaf, max(20, n_rows // 20))
        return HistGradientBoostingRegressor(
            loss="absolute_error", max_iter=self.max_iter, learning_rate=self.learning_rate,
            max_leaf_nodes=self.max_leaf_nodes, l2_regularization=1.0, min_samples_leaf=leaf,
            early_stopping=False, random_state=self.seed)

    def offset(self, X: np.ndarray) -> np.ndarray:
        """(n,) the part of log2-speedup the trees do not learn: a share of the ideal."""
        return self.ideal_offset * X[:, IDEAL]

    def fit(self, X: np.ndarray, log2s: np.ndarray) -> "MedianRegressor":
        """Fit on rows X and their measured log2-speedups; returns self."""
        self.model_ = self.new_model(len(X)).fit(X, log2s - self.offset(X))
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        """(n,) median log2-speedup of rows X."""
        if not hasattr(self, "model_"):
            raise NotFittedError("MedianRegressor is not fitted; call fit(X, log2s) first")
        return self.model_.predict(X) + self.offset(X)
