"""Calibration metrics, selective prediction and risk control for speedup-bin forecasts.

    from workbench.calibration import metrics, summary, ThresholdPolicy, ConformalRiskController
"""
from __future__ import annotations

from workbench.calibration import metrics, selective
from workbench.calibration.conformal import ConformalRiskController
from workbench.calibration.errors import MetricInputError
from workbench.calibration.metrics import (accuracy, brier, crps, ece, nll, off_by_one_accuracy,
                                           reliability, spearman, summary, top_k_recovery,
                                           top_k_recovery_median)
from workbench.calibration.selective import (SCORES, RiskCoverage, ThresholdPolicy, aurc,
                                             confidence, risk_coverage, selective_risk_at_coverage)

__all__ = [
    "SCORES", "ConformalRiskController", "MetricInputError", "RiskCoverage", "ThresholdPolicy",
    "accuracy", "aurc", "brier", "confidence", "crps", "ece", "metrics", "nll",
    "off_by_one_accuracy", "reliability", "risk_coverage", "selective",
    "selective_risk_at_coverage", "spearman", "summary", "top_k_recovery", "top_k_recovery_median",
]
