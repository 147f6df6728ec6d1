"""Counts over measurements: per problem, status, bin and GPU. Pure functions, no printing."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from workbench import bins
from workbench.dataset.sources import collect


@dataclass
class DatasetStats:
    """Measurement counts. `by_bin` is keyed by bin label ("<=0.25x" ... ">4x"), in bin order,
    and counts only measurements with status ok; every other mapping is sorted by key."""

    measurements: int = 0
    problems: int = 0
    candidates: int = 0
    by_problem: dict[str, int] = field(default_factory=dict)
    by_status: dict[str, int] = field(default_factory=dict)
    by_bin: dict[str, int] = field(default_factory=dict)
    by_gpu: dict[str, int] = field(default_factory=dict)
    by_gpu_status: dict[str, dict[str, int]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def stats(source: Any, hardware_key: str | None = None) -> DatasetStats:
    """Counts for any data source (Store, RecordSet, tuple, shipped directory).

    `hardware_key` ("h100", ...) keeps one GPU's measurements. `problems` and `candidates`
    count those that have at least one kept measurement.
    """
    from workbench.store import Store

    if isinstance(source, Store):  # only the measurements are needed
        ms = source.measurements(hardware_key=hardware_key or None)
    else:
        ms = collect(source, hardware_key).measurements
    by_bin = Counter(m.bin for m in ms if m.bin is not None)
    gpu_status: dict[str, Counter] = {}
    for m in ms:
        gpu_status.setdefault(m.hardware_key, Counter())[m.status.value] += 1
    return DatasetStats(
        measurements=len(ms),
        problems=len({m.problem_id for m in ms}),
        candidates=len({m.candidate_id for m in ms}),
        by_problem=dict(sorted(Counter(m.problem_id for m in ms).items())),
        by_status=dict(sorted(Counter(m.status.value for m in ms).items())),
        by_bin={bins.label(i): by_bin.get(i, 0) for i in range(bins.N_BINS)},
        by_gpu=dict(sorted(Counter(m.hardware_key for m in ms).items())),
        by_gpu_status={k: dict(sorted(v.items())) for k, v in sorted(gpu_status.items())},
    )
