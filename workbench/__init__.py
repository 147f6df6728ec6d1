"""GPU Forecasters Workbench: forecast kernel speedups, trust the confident ones, measure the rest."""
from __future__ import annotations

__version__ = "0.1.0"
