"""An analytic forecaster: roofline time estimates for candidate and reference, no training.

Both times come from the problem's analytic FLOPs and bytes and the GPU's peak rates
(`features.peaks_for`):

    floor_ms = max(flops / peak_flops, bytes / peak_bandwidth)
    candidate_ms = floor_ms / efficiency(static features) + launches * LAUNCH_MS
    reference_ms = floor_ms' / reference_efficiency + reference_ops * LAUNCH_MS

where the reference's bytes grow with its unfused op count (intermediates written and read
back) and its efficiency is a prior (vendor libraries near peak). The log2 of their ratio is the
centre of a normal distribution in log2-speedup space whose width grows with what the model
cannot see (CUDA sources, unknown counts); the bin probabilities are its mass between the bin
edges. It is a baseline: crude, fast, and honest about being unsure.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from workbench import bins
from workbench.forecast.base import Forecaster, temper_unknown_counts
from workbench.forecast.features import LAUNCH_MS, Peaks, features, peaks_for
from workbench.records import Candidate, Forecast, Hardware, Problem

_LOG2_EDGES = np.log2(np.asarray(bins.EDGES))


def normal_bin_probabilities(mu: float, sigma: float) -> tuple[float, ...]:
    """Mass of N(mu, sigma^2) in log2-speedup space falling in each of the 8 bins."""
    z = (_LOG2_EDGES - mu) / (sigma * math.sqrt(2.0))
    cdf = 0.5 * (1.0 + np.vectorize(math.erf)(z))
    p = np.diff(np.concatenate([[0.0], cdf, [1.0]]))
    p = np.maximum(p, 1e-6)  # never rule a bin out entirely
    return tuple(float(x) for x in p / p.sum())


@dataclass(frozen=True)
class TimeEstimate:
    """A roofline time estimate in ms and the numbers behind it."""

    ms: float
    floor_ms: float
    efficiency: float
    launches: int
    bound: str  # "memory" | "compute" | "unknown"


def candidate_time(problem: Problem, f: dict[str, float], peaks: Peaks) -> TimeEstimate:
    """Roofline estimate of a candidate's time from its static features `f` (see module doc)."""
    launches = int(max(1.0, f["n_launches"]))
    if not f["counts_known"]:
        return TimeEstimate(ms=launches * LAUNCH_MS, floor_ms=0.0, efficiency=1.0,
                            launches=launches, bound="unknown")
    tensor_cores = f["n_dot"] > 0 and not f["ieee_dot"]
    flops_s = peaks.flops_for(problem.dtype, tensor_cores)
    t_compute = 1e3 * problem.flops / flops_s
    t_memory = 1e3 * problem.bytes_moved / peaks.dram_bytes_s
    bound = "compute" if t_compute > t_memory else "memory"
    floor = max(t_compute, t_memory)
    eff = 0.6 if bound == "compute" else 0.7
    if f["num_warps"] <= 1:
        eff *= 0.5
    elif f["num_warps"] == 2:
        eff *= 0.8
    if 0 < f["log2_block_max"] < 6:          # blocks under 64 elements: poor reuse / coalescing
        eff *= 0.5
    if bound == "compute" and 0 < f["log2_block_prod"] < 15:   # tiles under 32x32x32
        eff *= 0.5
    if bound == "compute" and f["num_stages"] >= 3:
        eff *= 1.1
    if f["n_atomic"] > 0:
        eff *= 0.8
    ms = floor / min(eff, 0.9) + launches * LAUNCH_MS
    if f["torch_ops_left"] > 0:  # unfused torch ops left in forward cost roughly their share
        ref = reference_time(problem, f, peaks)
        ms += f["torch_ops_left"] / f["ref_ops"] * ref.ms
    return TimeEstimate(ms=ms, floor_ms=floor, efficiency=min(eff, 0.9), launches=launches,
                        bound=bound)


def reference_time(problem: Problem, f: dict[str, float], peaks: Peaks) -> TimeEstimate:
    """Roofline estimate of the PyTorch reference: one kernel per op, unfused intermediates."""
    ops = int(max(1.0, f["ref_ops"]))
    if not f["counts_known"]:
        return TimeEstimate(ms=ops * LAUNCH_MS, floor_ms=0.0, efficiency=1.0, launches=ops,
                            bound="unknown")
    # PyTorch runs bf16/fp16 matmuls on tensor cores and fp32 ones in full fp32 by default.
    flops_s = peaks.flops_for(problem.dtype, problem.dtype in ("bf16", "fp16"))
    nbytes = problem.bytes_moved * (1.0 + 0.7 * (ops - 1))
    t_compute = 1e3 * problem.flops / flops_s
    t_memory = 1e3 * nbytes / peaks.dram_bytes_s
    bound = "compute" if t_compute > t_memory else "memory"
    eff = 0.75 if bound == "compute" else 0.8
    floor = max(t_compute, t_memory)
    return TimeEstimate(ms=floor / eff + ops * LAUNCH_MS, floor_ms=floor, efficiency=eff,
                        launches=ops, bound=bound)


class RooflineForecaster(Forecaster):
    """Analytic baseline forecaster (see module doc). `sigma` is the base width, in octaves,
    of the log2-speedup distribution; it widens for CUDA sources, unknown problem counts and
    sources that do not parse."""

    def __init__(self, sigma: float = 0.9, name: str = "roofline"):
        if sigma <= 0:
            raise ValueError("sigma must be positive")
        self.sigma = sigma
        self.name = name

    def _sigma(self, f: dict[str, float]) -> float:
        s = self.sigma
        s += 0.4 * f["backend_cuda"]
        s += 0.8 * (1.0 - f["counts_known"])
        s += 0.3 * (1.0 - f["parse_ok"])
        return s

    def forecast(self, problem: Problem, candidate: Candidate, hardware: Hardware,
                 parent: Candidate | None = None, relative_to: str = "reference") -> Forecast:
        if not hardware.is_gpu:
            return Forecast.abstention(self.name, candidate.id, problem.id, hardware.key,
                                       "the roofline model needs a GPU's peak rates",
                                       relative_to=relative_to)
        if relative_to not in ("reference", "parent"):
            raise ValueError(f"relative_to is 'reference' or 'parent', got {relative_to!r}")
        if relative_to == "parent" and parent is None:
            return Forecast.abstention(self.name, candidate.id, problem.id, hardware.key,
                                       "a parent-relative forecast needs the parent",
                                       relative_to=relative_to)
        peaks = peaks_for(hardware)
        f = features(problem, candidate, hardware)
        cand = candidate_time(problem, f, peaks)
        sigma = self._sigma(f)
        if relative_to == "parent":
            fp = features(problem, parent, hardware)
            base = candidate_time(problem, fp, peaks)
            sigma = max(0.3, 0.7 * max(sigma, self._sigma(fp)))  # shared errors partly cancel
            against = "the parent"
        else:
            base = reference_time(problem, f, peaks)
            against = "the PyTorch reference"
        mu = math.log2(base.ms / cand.ms)
        probs, tempered = temper_unknown_counts(problem, normal_bin_probabilities(mu, sigma))
        if cand.bound == "unknown":
            why = (f"Problem FLOPs/bytes unknown; from launch counts alone ({cand.launches} vs "
                   f"{base.launches}) about {2 ** mu:.2g}x against {against}, very unsure.")
        else:
            why = (f"Roofline on {peaks.key}: {cand.bound}-bound, floor {cand.floor_ms:.3g} ms; "
                   f"candidate ~{cand.ms:.3g} ms (efficiency {cand.efficiency:.2f}, "
                   f"{cand.launches} launch(es)) vs {against} ~{base.ms:.3g} ms, so about "
                   f"{2 ** mu:.2g}x (spread {sigma:.1f} octaves).")
        if tempered:
            why += " Counts unknown: no extreme bin gets more than half the probability."
        if peaks.source != "table":
            why += f" Peak rates {peaks.source}."
        return Forecast(forecaster=self.name, candidate_id=candidate.id, problem_id=problem.id,
                        hardware_key=hardware.key, probabilities=probs, relative_to=relative_to,
                        reasoning=why)
