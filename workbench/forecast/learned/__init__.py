"""The learned forecaster and its parts (see `forecaster` for how they fit together).

- `reference`: how a measured reference time enters the features;
- `median`: `MedianRegressor`, the median log2-speedup relative to a share of the roofline;
- `distribution`: `ResidualDistribution`, bin probabilities from out-of-fold residuals;
- `selection`: `select_variant` / `VariantChoice`, the variant chosen by out-of-fold error;
- `forecaster`: `LearnedForecaster` (fit, calibrate, predict; save / load);
- `adapted`: `AdaptedForecaster`, a fitted one corrected by a run's measured kernels.
"""
from __future__ import annotations

from workbench.forecast.learned.adapted import AdaptedForecaster
from workbench.forecast.learned.distribution import (OBJECTIVES, ResidualDistribution,
                                                     relative_distribution,
                                                     residual_bin_probabilities)
from workbench.forecast.learned.forecaster import FORMAT, LearnedForecaster, training_rows
from workbench.forecast.learned.median import OFFSET_GRID, MedianRegressor
from workbench.forecast.learned.reference import (REFERENCE_TIMES, REFERENCE_USES,
                                                  measured_reference_matrix, reference_time_error)
from workbench.forecast.learned.selection import VariantChoice, select_variant

__all__ = ["AdaptedForecaster", "FORMAT", "LearnedForecaster", "MedianRegressor", "OBJECTIVES",
           "OFFSET_GRID", "REFERENCE_TIMES", "REFERENCE_USES", "ResidualDistribution",
           "VariantChoice", "measured_reference_matrix", "reference_time_error",
           "relative_distribution", "residual_bin_probabilities", "select_variant",
           "training_rows"]
