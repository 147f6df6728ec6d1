"""Forecasters: the interface, the analytic roofline baseline, the learned model, a cache.

    from workbench.forecast import Forecaster, RooflineForecaster, LearnedForecaster

LLM forecasters live in this package too (llm.py, local.py, prompts/) and are imported from
their own modules so that this package imports without LLM dependencies.
"""
from __future__ import annotations

from workbench.forecast.base import Forecaster
from workbench.forecast.cache import CachedForecaster, ForecastCache, content_hash, feature_key
from workbench.forecast.learned import LearnedForecaster, relative_distribution
from workbench.forecast.roofline import RooflineForecaster

__all__ = [
    "CachedForecaster", "ForecastCache", "Forecaster", "LearnedForecaster",
    "RooflineForecaster", "content_hash", "feature_key", "relative_distribution",
]
