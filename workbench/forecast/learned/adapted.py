"""A fitted learned forecaster corrected by measured kernels of one problem on one GPU.

This module does not import `forecaster.py` (which builds AdaptedForecasters), not even for
type hints: what it needs of its base is the `AdaptableBase` protocol below, so the two modules
form no import cycle."""
from __future__ import annotations

from typing import Protocol, Sequence

import numpy as np

from workbench.forecast.base import BatchForecaster
from workbench.forecast.features import FEATURE_NAMES
from workbench.records import Candidate, Forecast, Hardware, Problem


class AdaptableBase(Protocol):
    """What AdaptedForecaster uses of its base (a fitted `LearnedForecaster`)."""

    name: str
    has_median: bool

    def _features(self, rows: Sequence[tuple[Problem, Candidate, Hardware]]) -> np.ndarray: ...

    def evidence_correction(self, X_evidence: np.ndarray, log2_evidence: np.ndarray, X: np.ndarray,
                            bandwidth: float, prior: float) -> np.ndarray: ...

    def _forecast_batch(self, items: Sequence[tuple[Problem, Candidate]], hardware: Hardware, relative_to: str,
                        parents: Sequence[Candidate | None] | None, adapted: "AdaptedForecaster | None"
                        ) -> list[Forecast]: ...

    def calibration_set(self) -> tuple[np.ndarray, np.ndarray] | None: ...


class AdaptedForecaster(BatchForecaster):
    """A fitted `LearnedForecaster` corrected by measured kernels of one problem on one GPU
    (`LearnedForecaster.adapted`). Same name as the base: its forecasts are the base's
    forecasts with the problem's evidence folded in, and their reasoning says by how much."""

    def __init__(self, base: AdaptableBase, problem: Problem, hardware: Hardware,
                 evidence: list[tuple[Candidate, float]], bandwidth: float, prior: float):
        self.base, self.problem, self.hardware = base, problem, hardware
        self.evidence, self.bandwidth, self.prior = evidence, bandwidth, prior
        self.name = base.name
        self._X = (base._features([(problem, c, hardware) for c, _ in evidence])
                   if evidence else np.zeros((0, len(FEATURE_NAMES))))
        self._log2 = np.log2([s for _, s in evidence]) if evidence else np.zeros(0)

    def shift(self, problems: Sequence[Problem], hardware: Hardware, X: np.ndarray) -> np.ndarray | None:
        """(n,) the correction for rows X (0 for rows of another problem or GPU), or None."""
        if not self.evidence or hardware.key != self.hardware.key or not self.base.has_median:
            return None
        mine = np.array([p.id == self.problem.id for p in problems])
        if not mine.any():
            return None
        out = np.zeros(len(X))
        out[mine] = self.base.evidence_correction(self._X, self._log2, X[mine], self.bandwidth,
                                                  self.prior)
        return out

    def forecast_batch(self, items: Sequence[tuple[Problem, Candidate]], hardware: Hardware,
                       relative_to: str = "reference",
                       parents: Sequence[Candidate | None] | None = None) -> list[Forecast]:
        return self.base._forecast_batch(items, hardware, relative_to, parents, self)

    def calibration_set(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The base forecaster's out-of-fold calibration set (not re-fitted on the evidence)."""
        return self.base.calibration_set()
