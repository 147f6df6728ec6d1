"""The forecaster interface."""
from __future__ import annotations

import abc
from typing import Sequence

from workbench.records import Candidate, Forecast, Hardware, Problem


class Forecaster(abc.ABC):
    """Forecasts a candidate's speedup as a distribution over the 8 bins of `bins.py`.

    `relative_to="reference"` forecasts speedup over the problem's PyTorch reference;
    `relative_to="parent"` forecasts speedup of the candidate over `parent` (another
    candidate of the same problem), which is what a search needs. An answer that cannot be
    produced is an abstention (`Forecast.abstention`), never an exception.
    """

    #: Unique name used in the store and in reports, e.g. "learned", "roofline", "llm:smollm2".
    name: str

    @abc.abstractmethod
    def forecast(self, problem: Problem, candidate: Candidate, hardware: Hardware,
                 parent: Candidate | None = None, relative_to: str = "reference") -> Forecast:
        """One forecast."""

    def forecast_batch(self, items: Sequence[tuple[Problem, Candidate]], hardware: Hardware,
                       relative_to: str = "reference",
                       parents: Sequence[Candidate | None] | None = None) -> list[Forecast]:
        """Many forecasts; implementations may batch or run concurrently. Order is kept."""
        parents = parents or [None] * len(items)
        return [self.forecast(p, c, hardware, parent=par, relative_to=relative_to)
                for (p, c), par in zip(items, parents)]

    def calibration_set(self):
        """Forecasts of held-out rows with their measured bins, ((n, 8) probabilities, (n,) bins),
        on which a selective policy can be calibrated before a search has measured anything;
        None when the forecaster has none (the default; the learned forecaster keeps its
        out-of-fold forecasts)."""
        return None


class BatchForecaster(Forecaster):
    """A forecaster whose `forecast_batch` does the work; `forecast` is a batch of one."""

    def forecast(self, problem: Problem, candidate: Candidate, hardware: Hardware,
                 parent: Candidate | None = None, relative_to: str = "reference") -> Forecast:
        return self.forecast_batch([(problem, candidate)], hardware, relative_to, [parent])[0]

    @abc.abstractmethod
    def forecast_batch(self, items: Sequence[tuple[Problem, Candidate]], hardware: Hardware,
                       relative_to: str = "reference",
                       parents: Sequence[Candidate | None] | None = None) -> list[Forecast]:
        """Many forecasts, order kept."""
