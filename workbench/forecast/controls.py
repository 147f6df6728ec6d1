"""Control forecasters: what a forecaster has to beat to have any skill.

- `RandomForecaster` ("random"): no information. Its probabilities are uniform over the 8 bins up
  to a tilt of at most `TILT` per bin, and the tilt is set so that its expected log2-speedup is the
  uniform one plus `TILT` times a seeded uniform number in [-1, 1] drawn from (seed, problem,
  candidate). So every probability metric scores it as the uniform forecast (to within `TILT`),
  while any ranking by expected log2-speedup (top-k screening, pairwise order, Spearman) is a
  seeded random permutation. The same candidate gets the same number in every batch and order.
- `ClimatologyForecaster` ("climatology"): the bin frequencies of its training measurements, the
  same distribution for every candidate. It is fitted per training fold like a learned forecaster,
  so its frequencies never include the scored problems. Its scores are all tied, so ranking
  metrics see a constant score (ties count half in pairwise order; ties are broken at random in
  expectation in screening). Parent-relative forecasts use the frequencies of child / parent
  speedup bins among training rows whose parent was measured on the same GPU; with none, uniform.

Both are controls reported beside every evaluation (`workbench evaluate`,
benchmarks/forecast_bench.py): a metric on which they score as well as a forecaster does not
measure that forecaster's skill.
"""
from __future__ import annotations

import hashlib
from typing import Sequence

import numpy as np

from workbench import bins
from workbench.errors import ConfigError, NotFittedError
from workbench.forecast.base import BatchForecaster, Forecaster
from workbench.records import Candidate, Forecast, Hardware, Measurement, Problem

#: Size of the random forecaster's tilt away from uniform (probability units, at most per bin).
TILT = 1e-6

_M = np.asarray(bins.LOG2_MIDPOINTS)
_DIRECTION = (_M - _M.mean()) / float(np.sum((_M - _M.mean()) ** 2))


def seeded_uniform(seed: int, *keys: str) -> float:
    """A number in [-1, 1) fixed by `seed` and `keys` (sha256; independent of call order)."""
    h = hashlib.sha256("\x1f".join((str(seed),) + keys).encode()).digest()
    return int.from_bytes(h[:8], "big") / 2.0 ** 63 - 1.0


def tilted_uniform(u: float) -> tuple[float, ...]:
    """Uniform bin probabilities tilted so the expected log2-speedup is the uniform one + TILT*u."""
    p = 1.0 / bins.N_BINS + TILT * u * _DIRECTION
    return tuple(float(x) for x in p)


class RandomForecaster(BatchForecaster):
    """Seeded random ranking, uniform probabilities (see the module doc). Needs no training."""

    def __init__(self, seed: int = 0, name: str = "random"):
        self.seed = int(seed)
        self.name = name

    def forecast_batch(self, items: Sequence[tuple[Problem, Candidate]], hardware: Hardware,
                       relative_to: str = "reference",
                       parents: Sequence[Candidate | None] | None = None) -> list[Forecast]:
        parents = parents or [None] * len(items)
        out = []
        for (problem, cand), parent in zip(items, parents):
            u = seeded_uniform(self.seed, problem.id, cand.id, relative_to,
                               parent.id if parent is not None else "")
            out.append(Forecast(forecaster=self.name, candidate_id=cand.id, problem_id=problem.id,
                                hardware_key=hardware.key, probabilities=tilted_uniform(u),
                                relative_to=relative_to,
                                reasoning="control: uniform probabilities, seeded random order"))
        return out


def bin_frequencies(bin_indices: Sequence[int]) -> tuple[float, ...]:
    """Relative frequency of each bin index 0..7 (uniform when there are none)."""
    counts = np.bincount(np.asarray(list(bin_indices), dtype=int), minlength=bins.N_BINS)
    if counts.sum() == 0:
        return (1.0 / bins.N_BINS,) * bins.N_BINS
    return tuple(float(x) for x in counts / counts.sum())


class ClimatologyForecaster(BatchForecaster):
    """The training measurements' bin frequencies for every candidate (see the module doc).

    `bin_convention` (`bins.CONVENTIONS`) is how training speedups become bins; score it against
    labels of the same convention. Learned attributes after `fit`: `frequencies_` (reference-
    relative), `parent_frequencies_`, `n_train_`.
    """

    def __init__(self, name: str = "climatology", bin_convention: str = bins.DEFAULT_CONVENTION):
        if bin_convention not in bins.CONVENTIONS:
            raise ConfigError(f"unknown bin convention {bin_convention!r}; use one of "
                              f"{', '.join(bins.CONVENTIONS)}")
        self.name = name
        self.bin_convention = bin_convention

    def fit(self, problems: Sequence[Problem], candidates: Sequence[Candidate],
            measurements: Sequence[Measurement]) -> "ClimatologyForecaster":
        """Count the bins of the ok measurements (all GPUs given); returns self."""
        ok = [m for m in measurements if m.ok and m.speedup]
        if not ok:
            raise ConfigError("climatology needs at least one ok measurement to fit; load "
                              "measurements first (`workbench dataset load-shipped`)")
        conv = self.bin_convention
        self.frequencies_ = bin_frequencies([bins.bin_of_convention(m.speedup, conv) for m in ok])
        parent_of = {c.id: c.parent_id for c in candidates if c.parent_id}
        speed = {(m.candidate_id, m.hardware_key): float(m.speedup) for m in ok}
        rel = []
        for m in ok:
            par = parent_of.get(m.candidate_id)
            ps = speed.get((par, m.hardware_key)) if par else None
            if ps:
                rel.append(bins.bin_of_convention(float(m.speedup) / ps, conv))
        self.parent_frequencies_ = bin_frequencies(rel)
        self.n_train_ = len(ok)
        return self

    def forecast_batch(self, items: Sequence[tuple[Problem, Candidate]], hardware: Hardware,
                       relative_to: str = "reference",
                       parents: Sequence[Candidate | None] | None = None) -> list[Forecast]:
        if not hasattr(self, "frequencies_"):
            raise NotFittedError("ClimatologyForecaster is not fitted; call fit(problems, "
                                 "candidates, measurements) first")
        p = self.frequencies_ if relative_to == "reference" else self.parent_frequencies_
        return [Forecast(forecaster=self.name, candidate_id=c.id, problem_id=pr.id,
                         hardware_key=hardware.key, probabilities=p, relative_to=relative_to,
                         reasoning=f"control: bin frequencies of {self.n_train_} training rows")
                for pr, c in items]


#: Names of the control forecasters, as the CLI and benchmarks take them.
CONTROLS = ("random", "climatology")


def make_control(name: str, seed: int = 0, bin_convention: str = bins.DEFAULT_CONVENTION
                 ) -> Forecaster:
    """A fresh control forecaster by name (`CONTROLS`)."""
    if name == "random":
        return RandomForecaster(seed=seed)
    if name == "climatology":
        return ClimatologyForecaster(bin_convention=bin_convention)
    raise ConfigError(f"unknown control forecaster {name!r}; use one of {', '.join(CONTROLS)}")
