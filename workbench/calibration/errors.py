"""Errors of the calibration package."""
from __future__ import annotations

from workbench.errors import WorkbenchError


class MetricInputError(WorkbenchError, ValueError):
    """Arrays handed to a metric have the wrong shape or values."""
