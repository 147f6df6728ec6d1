"""The forecaster interface."""
from __future__ import annotations

import abc
from typing import Sequence

from workbench.records import Candidate, Forecast, Hardware, Measurement, Problem, RunEvidence

#: The most probability an extreme bin (1 or 8) may get for a problem whose FLOPs and bytes are
#: unknown: without them nothing bounds the candidate's time from below.
UNKNOWN_COUNTS_EXTREME_CAP = 0.5


def temper_unknown_counts(problem: Problem, probs: Sequence[float]) -> tuple[tuple[float, ...], bool]:
    """`probs` unchanged for a problem with declared or derived counts; for one with unknown
    counts (`Problem.count_source == "unknown"`), mixed with the uniform distribution just
    enough that neither extreme bin exceeds `UNKNOWN_COUNTS_EXTREME_CAP` (order of the bins and
    the total of 1 are kept). Returns (probabilities, whether they were changed)."""
    p = [float(x) for x in probs]
    if problem.count_source != "unknown" or not p:
        return tuple(p), False
    u = 1.0 / len(p)
    worst = max(p[0], p[-1])
    if worst <= UNKNOWN_COUNTS_EXTREME_CAP:
        return tuple(p), False
    w = (worst - UNKNOWN_COUNTS_EXTREME_CAP) / (worst - u)
    return tuple((1.0 - w) * x + w * u for x in p), True


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

    def for_run(self, problem: Problem, hardware: Hardware, evidence: RunEvidence) -> "Forecaster":
        """The forecaster a search of `problem` on `hardware` forecasts with, given what the run
        knows so far (`evidence`). Never changes self. The default learns nothing from a run and
        returns self; a forecaster that does (the learned one: the measured reference time, the
        run's correct kernels) returns a new object."""
        return self

    def with_reference_times(self, measurements: Sequence[Measurement]) -> "Forecaster":
        """A forecaster that knows the measured reference times of `measurements` (one time per
        problem and GPU: what a user has once a problem's reference was timed there, never a
        candidate's time). Never changes self; the default ignores them and returns self."""
        return self

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
