"""One evaluation's scores as a value: the record `crossval.evaluate` returns and
`report` renders (tables, plots, metrics.json)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from workbench import bins
from workbench.calibration import selective
from workbench.records import Forecast

#: Metric keys of every evaluation, in table order.
METRIC_KEYS = ("top10_recovery_median", "accuracy", "off_by_one", "ece", "brier", "crps", "nll",
               "aurc", "spearman")

@dataclass
class EvaluationResult:
    """Scores of one forecaster on one (train GPU, test GPU, split) setting.

    `metrics` holds METRIC_KEYS plus n (scored rows), n_problems, n_abstained, folds and the
    extra keys of `score`; `per_problem_recovery` the top-10% recovery of each problem's pool;
    `forecasts`, `true_bins`, `speedups`, `parents` (each row's parent candidate id or None) and
    `fold_of_rows` (the cross-validation fold that scored each row; -1 when not trained) are
    aligned row by row; `plots` names the PNGs written.
    """

    forecaster: str
    split: str
    train_gpu: str
    test_gpu: str
    metrics: dict[str, float]
    per_problem_recovery: dict[str, float]
    forecasts: list[Forecast] = field(repr=False)
    true_bins: np.ndarray = field(repr=False)
    speedups: np.ndarray = field(repr=False)
    plots: dict[str, Path] = field(default_factory=dict)
    parents: list = field(default_factory=list, repr=False)
    fold_of_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int), repr=False)
    bin_convention: str = bins.DEFAULT_CONVENTION
    predicted_bin: str = "argmax"

    @property
    def probabilities(self) -> np.ndarray:
        return selective.probabilities(self.forecasts)

    @property
    def scores(self) -> np.ndarray:
        """Each row's ranking score: the expected log2-speedup of its forecast, computed row by
        row so that equal forecasts get bit-equal scores (ties stay ties)."""
        return np.asarray([f.expected_log2_speedup for f in self.forecasts], dtype=float)

    @property
    def problems(self) -> list[str]:
        return [f.problem_id for f in self.forecasts]

    def row(self) -> dict[str, Any]:
        """One table row: forecaster, GPUs, split and the metrics rounded to 3 decimals."""
        out: dict[str, Any] = {"forecaster": self.forecaster,
                               "train->test": f"{self.train_gpu}->{self.test_gpu}",
                               "split": self.split, "n": int(self.metrics["n"])}
        for k in METRIC_KEYS:
            v = self.metrics.get(k, float("nan"))
            out[k] = "nan" if v != v else f"{v:.3f}"
        return out

    def to_json(self) -> dict[str, Any]:
        return {"forecaster": self.forecaster, "split": self.split, "train_gpu": self.train_gpu,
                "test_gpu": self.test_gpu, "bin_convention": self.bin_convention,
                "predicted_bin": self.predicted_bin, "metrics": self.metrics,
                "per_problem_recovery": self.per_problem_recovery,
                "plots": {k: str(v) for k, v in self.plots.items()}}
