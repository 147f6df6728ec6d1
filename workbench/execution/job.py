"""What a measurement needs, as values: the executor's `MeasureJob` (one problem on one
hardware, every budget and setting `chunked.run_chunk` uses) and the `WorkerJob` it sends a
chunk worker for each candidate.

A `WorkerJob` crosses the worker's job channel as a flat JSON object (`to_dict`); the worker
reads it back with `from_dict` before any candidate code runs in that job. It carries
settings only: the judge (timer.py) checks and times the candidate; the worker reports only
whether it ran.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Mapping

from workbench.errors import ConfigError
from workbench.problems.contract import Contract
from workbench.records import Candidate, Hardware, Problem


def _ints(value: Any) -> tuple[int, ...] | None:
    return None if value is None else tuple(int(v) for v in value)


@dataclass(frozen=True)
class MeasureOptions:
    """How each candidate is checked and timed (the executor's `options` dict, typed).

    `seeds`: correctness seeds (the first also builds the timed models); `second_shape`: check
    at perturbed sizes too; `time`: time at all; `input_sets`: input sets timed in turn;
    `timing_repeats`: timed pairs per job; `timing` / `cpu_timing`: overrides of the CUDA / CPU
    timer settings (timing.py); `timing_cpus`: the core the worker times on; `worker_cpus`: the
    worker process's CPU affinity; `gpu_memory_fraction`: the share of GPU memory a worker may
    take (0: no cap); `compile_unlocked` (on unless set False): a worker steps out of its shared
    GPU hold while Triton compiles a kernel (CPU work), so a timer waiting for the GPU does not
    wait for the compile (gpu_lock.GpuLock.step_out; timed regions are unchanged); `check_share`: the share of
    timed candidate calls whose outputs the judge checks (None: every call on the CPU, where
    outputs are small, half of them on a GPU; see session.py). `precision` / `tolerance`: the
    run's contract (`workbench.problems.contract.Contract`: the precision the reference, the
    candidate and the inputs are cast to, and the tolerance the judge compares outputs with);
    its trials are the `seeds`.
    """

    seeds: tuple[int, ...] = (0, 1, 2)
    second_shape: bool = True
    time: bool = True
    input_sets: int = 3
    timing_repeats: int = 1
    timing: Mapping[str, Any] = field(default_factory=dict)
    cpu_timing: Mapping[str, Any] = field(default_factory=dict)
    timing_cpus: tuple[int, ...] | None = None
    worker_cpus: tuple[int, ...] | None = None
    gpu_memory_fraction: float = 0.0
    compile_unlocked: bool = True
    check_share: float | None = None
    precision: str = "native"
    tolerance: str = ""

    def __post_init__(self) -> None:
        c = Contract(self.precision, self.tolerance)  # checked; "" is the precision's default
        object.__setattr__(self, "precision", c.precision)
        object.__setattr__(self, "tolerance", c.tolerance)

    @property
    def contract(self) -> Contract:
        """The run's contract (precision, tolerance, trials = the number of seeds)."""
        return Contract.from_options(self)

    @classmethod
    def from_dict(cls, options: Mapping[str, Any] | None) -> MeasureOptions:
        """Options from a dict of the field names; an unknown name is refused (ConfigError)."""
        options = dict(options or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise ConfigError(f"unknown measurement option(s) {unknown}; the options are "
                              f"{', '.join(sorted(known))}")
        for key in ("seeds", "timing_cpus", "worker_cpus"):
            if key in options:
                options[key] = _ints(options[key])
        for key in ("timing", "cpu_timing"):
            if key in options:
                options[key] = dict(options[key] or {})
        return cls(**options)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (tuples as lists); `from_dict(to_dict())` gives an equal value."""
        out: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            out[f.name] = list(v) if isinstance(v, tuple) else dict(v) if isinstance(v, Mapping) else v
        return out


@dataclass(frozen=True)
class WorkerJob:
    """One candidate's job as a chunk worker receives it (see module doc).

    `workdir` is the job's own directory (the candidate file is written there); `lock_path`
    the GPU's lock (None: no lock, CPU runs); `prepared` what the judge's preparation made of
    the problem (reference.ReferenceData): {"shapes": {slot: {"cpu", "sizes", "precision"}},
    "weights": {slot: directory of the reference's state dict}}.
    """

    problem: Mapping[str, Any]
    candidate: Mapping[str, Any]
    device: str
    workdir: str
    lock_path: str | None
    prepared: Mapping[str, Any] = field(default_factory=dict)
    options: MeasureOptions = MeasureOptions()

    @property
    def candidate_id(self) -> str:
        return str(self.candidate["id"])

    def to_dict(self) -> dict[str, Any]:
        return {"problem": dict(self.problem), "candidate": dict(self.candidate), "device": self.device,
                "workdir": self.workdir, "lock_path": self.lock_path, "prepared": dict(self.prepared),
                **self.options.to_dict()}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> WorkerJob:
        base = ("problem", "candidate", "device", "workdir", "lock_path", "prepared")
        return cls(**{k: d[k] for k in base},
                   options=MeasureOptions.from_dict({k: v for k, v in d.items() if k not in base}))


@dataclass(frozen=True)
class MeasureJob:
    """Measuring candidates of one problem on one hardware: everything `run_chunk` needs.

    Budgets per candidate, in seconds: `timeout_s` for starting, compiling and checking (CUDA
    C++ candidates get three times as long, `compile_budget_s`), `run_timeout_s` for its timed
    regions (None: they count against `timeout_s`), `max_wait_s` in all; waiting for the GPU's
    lock counts against none but `max_wait_s`. `gpu_index` sets CUDA_VISIBLE_DEVICES (None:
    inherited); `cpu_mem_bytes` the worker's RLIMIT_AS (CPU runs only: it breaks CUDA);
    `roofline_floor_ms` the fastest time believed (None: no floor); `cache_root` the build
    cache's root (None: the default).
    """

    problem: Problem
    hardware: Hardware
    device: str = "cuda"
    gpu_index: int | None = None
    timeout_s: float = 120.0
    run_timeout_s: float | None = None
    max_wait_s: float = 3600.0
    lock_path: str | None = None
    roofline_floor_ms: float | None = None
    cpu_mem_bytes: int | None = None
    cache_root: str | Path | None = None
    options: MeasureOptions = MeasureOptions()

    def replace(self, **changes: Any) -> MeasureJob:
        return replace(self, **changes)

    def compile_budget_s(self, candidate: Candidate) -> float:
        return self.timeout_s * (3 if candidate.backend == "cuda" else 1)

    def for_candidate(self, candidate: Candidate, workdir: Path, prepared: Mapping[str, Any]) -> WorkerJob:
        """The worker's job for `candidate`, in `workdir`, with the judge's preparation."""
        return WorkerJob(problem=self.problem.to_dict(), candidate=candidate.to_dict(), device=self.device,
                         workdir=str(workdir), lock_path=self.lock_path, prepared=dict(prepared),
                         options=self.options)
