"""Immutable records that every part of the workbench exchanges.

Units live in field names (`_ms`, `_mib`, `_mhz`). Records are plain frozen dataclasses
with `to_dict` / `from_dict` so the store, Parquet files and JSON all use one shape.
"""
from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import io
import json
import math
import re
import statistics
import time
import tokenize
from dataclasses import dataclass, field
from typing import Any, Mapping

from workbench import bins


def now_iso() -> str:
    """UTC time as an ISO-8601 string with a Z suffix."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class _Record:
    def to_dict(self) -> dict[str, Any]:
        out = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            v = getattr(self, f.name)
            if isinstance(v, enum.Enum):
                v = v.value
            elif isinstance(v, tuple):
                v = list(v)
            out[f.name] = v
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]):
        names = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        kwargs = {}
        for k, v in data.items():
            if k not in names:
                continue
            if isinstance(v, list):
                v = tuple(v)
            kwargs[k] = v
        return cls(**kwargs)  # type: ignore[call-arg]

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]


# --------------------------------------------------------------------------- hardware
@dataclass(frozen=True)
class Hardware(_Record):
    """Where a measurement was taken. `key` is the short GPU type ("h100", "h200", "cpu")."""

    key: str
    name: str
    kind: str = "cuda"  # "cuda" | "cpu"
    compute_capability: str = ""
    sm_count: int = 0
    memory_mib: int = 0
    l2_cache_mib: float = 0.0
    sm_clock_mhz: int = 0
    mem_clock_mhz: int = 0
    mem_bus_width_bits: int = 0
    max_threads_per_sm: int = 0
    driver: str = ""
    cuda_version: str = ""
    torch_version: str = ""
    triton_version: str = ""

    @property
    def fingerprint(self) -> str:
        """Stable hash of the fields that identify the machine and its software."""
        d = self.to_dict()
        d.pop("sm_clock_mhz", None)  # clocks vary run to run; recorded, not identifying
        d.pop("mem_clock_mhz", None)
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def is_gpu(self) -> bool:
        return self.kind == "cuda"


# --------------------------------------------------------------------------- problems
@dataclass(frozen=True)
class Problem(_Record):
    """A problem in the KernelBench contract (`Model`, `get_inputs`, `get_init_inputs`).

    `id` is "L{level}/{file stem}", e.g. "L1/03_softmax". `flops` and `bytes_moved` are the
    counts at the problem's full size; `counts_source` says where they came from: "declared"
    (the file's `flops()` / `bytes_moved()`), "derived" (traced from the reference,
    `workbench.problems.counts`) or "unknown" (neither: both 0). Records from before the field
    have "" (read as declared when a count is > 0, else unknown: `count_source`).
    """

    id: str
    level: int
    name: str
    source: str
    description: str = ""
    category: str = ""
    dtype: str = "fp32"
    tags: tuple[str, ...] = ()
    flops: float = 0.0
    bytes_moved: float = 0.0
    origin: str = "builtin"  # "builtin" or the directory it was imported from
    counts_source: str = ""

    @property
    def count_source(self) -> str:
        """"declared", "derived" or "unknown" (see the class doc)."""
        if self.counts_source:
            return self.counts_source
        return "declared" if (self.flops > 0 or self.bytes_moved > 0) else "unknown"

    @property
    def source_hash(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()[:16]


# --------------------------------------------------------------------------- candidates
#: Characters after which the tokenizer's round trip can differ from the text itself: a comment,
#: a backslash continuation (re-written as backslash-newline), a tab or form feed between tokens
#: (re-written as spaces), a carriage return.
_RETOKENIZED = re.compile(r"[#\\\t\f\r]")


def normalise_source(source: str) -> str:
    """Source with comments, blank lines and trailing whitespace removed.

    Two candidates that differ only in comments or spacing get the same id. Falls back to
    a line-wise strip when the source does not tokenize (it will fail to compile anyway).
    A source with none of the characters of `_RETOKENIZED` has no comment and tokenizes back to
    itself, so it is only stripped (the same text, without the tokenizer's cost).
    """
    if _RETOKENIZED.search(source) is None:
        return _strip_lines(source)
    return _normalise_tokenized(source)


def _normalise_tokenized(source: str) -> str:
    """normalise_source through the tokenizer: comment tokens dropped, the rest untokenized."""
    try:
        toks = [
            t for t in tokenize.generate_tokens(io.StringIO(source).readline)
            if t.type != tokenize.COMMENT
        ]
        text = tokenize.untokenize(toks)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        text = source
    return _strip_lines(text)


def _strip_lines(text: str) -> str:
    lines = [ln.rstrip() for ln in text.splitlines()]
    return "\n".join(ln for ln in lines if ln.strip())


@functools.lru_cache(maxsize=2048)
def candidate_id(source: str) -> str:
    """Content id of a candidate: sha256 of the normalised source, 16 hex digits."""
    return hashlib.sha256(normalise_source(source).encode()).hexdigest()[:16]


BACKENDS = ("triton", "cuda", "torch")


@dataclass(frozen=True)
class Candidate(_Record):
    """A candidate kernel in the KernelBench answer form (defines `ModelNew`)."""

    id: str
    problem_id: str
    source: str
    backend: str = "triton"
    parent_id: str | None = None
    generation: int = 0
    origin: str = "zoo"  # "zoo:<name>", "mutation:<op>", "llm:<model>:<prompt id>", ...
    created_at: str = field(default_factory=now_iso)

    @classmethod
    def from_source(cls, problem_id: str, source: str, **kw) -> "Candidate":
        backend = kw.pop("backend", None) or detect_backend(source)
        return cls(id=candidate_id(source), problem_id=problem_id, source=source,
                   backend=backend, **kw)


def detect_backend(source: str) -> str:
    if "load_inline" in source or "cpp_extension" in source:
        return "cuda"
    if "triton" in source:
        return "triton"
    return "torch"


# --------------------------------------------------------------------------- measurements
class Status(str, enum.Enum):
    OK = "ok"
    COMPILE_ERROR = "compile_error"
    RUNTIME_ERROR = "runtime_error"
    INCORRECT = "incorrect"
    TIMEOUT = "timeout"
    CRASHED = "crashed"
    CHEAT_SUSPECTED = "cheat_suspected"

    @property
    def is_failure(self) -> bool:
        return self is not Status.OK


@dataclass(frozen=True)
class Measurement(_Record):
    """The result of measuring one candidate on one machine.

    Times are medians in milliseconds with a 95% confidence interval of the median;
    `speedup` = reference_ms / candidate_ms, set only when status is ok.

    The contract it was judged by (`workbench.problems.contract.Contract`): `precision` the
    reference, the candidate and the inputs ran at ("native": the file as written; fp32, fp16,
    bf16: cast), `tolerance` the outputs were compared with ("project", "kernelbench",
    "legacy" or a number, atol = rtol) and `trials` the seeded input trials it had to pass (0:
    not recorded). Records from before these fields read as native / project.
    """

    candidate_id: str
    problem_id: str
    hardware_key: str
    status: Status
    hardware_fingerprint: str = ""
    reference_ms: float | None = None
    reference_ci_low_ms: float | None = None
    reference_ci_high_ms: float | None = None
    reference_runs: int = 0
    candidate_ms: float | None = None
    candidate_ci_low_ms: float | None = None
    candidate_ci_high_ms: float | None = None
    candidate_runs: int = 0
    speedup: float | None = None
    compile_s: float | None = None
    reason: str = ""
    log: str = ""
    hardware_json: str = ""  # the full Hardware record, JSON
    measured_at: str = field(default_factory=now_iso)
    precision: str = "native"
    tolerance: str = "project"
    trials: int = 0

    def __post_init__(self):
        if not isinstance(self.status, Status):
            object.__setattr__(self, "status", Status(self.status))

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    @property
    def bin(self) -> int | None:
        """Bin index 0..7 of the measured speedup, None when not ok."""
        return bins.bin_of(self.speedup) if self.ok and self.speedup else None

    @property
    def hardware(self) -> Hardware | None:
        return Hardware.from_dict(json.loads(self.hardware_json)) if self.hardware_json else None


# --------------------------------------------------------------------------- forecasts
class ParseStatus(str, enum.Enum):
    OK = "ok"                    # structured answer parsed
    FALLBACK = "fallback"        # recovered by the fallback parser
    ABSTAINED = "abstained"      # nothing usable: treat as "defer to the GPU"


@dataclass(frozen=True)
class Forecast(_Record):
    """A forecast of a candidate's speedup as a distribution over the 8 bins of `bins.py`.

    `relative_to` is "reference" (speedup over the problem's reference) or "parent" (speedup
    over the parent kernel). `probabilities` are renormalised to sum to 1; `raw_sum` is what the
    forecaster returned before that (a health signal). An abstention has uniform probabilities,
    `parse_status` ABSTAINED, and must be deferred.
    """

    forecaster: str
    candidate_id: str
    problem_id: str
    hardware_key: str
    probabilities: tuple[float, ...]
    relative_to: str = "reference"
    reasoning: str = ""
    raw_sum: float = 1.0
    parse_status: ParseStatus = ParseStatus.OK
    p_fail: float | None = None  # probability that the candidate fails to compile or is wrong
    stated_bin: int | None = None  # bin index 0..7 the forecaster stated (an LLM's predicted_bin)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    created_at: str = field(default_factory=now_iso)

    def __post_init__(self):
        if not isinstance(self.parse_status, ParseStatus):
            object.__setattr__(self, "parse_status", ParseStatus(self.parse_status))
        p = tuple(float(x) for x in self.probabilities)
        if len(p) != bins.N_BINS:
            raise ValueError(f"a forecast needs {bins.N_BINS} probabilities, got {len(p)}")
        if any(x < 0 for x in p):
            raise ValueError("probabilities must be non-negative")
        s = sum(p)
        if s <= 0:
            raise ValueError("probabilities sum to zero")
        if abs(s - 1.0) > 1e-9:  # idempotent: an already normalised vector is kept bit-exact
            p = tuple(x / s for x in p)
        object.__setattr__(self, "probabilities", p)

    @property
    def predicted_bin(self) -> int:
        """Index 0..7 of the most probable bin."""
        p = self.probabilities
        return max(range(len(p)), key=p.__getitem__)

    @property
    def confidence(self) -> float:
        """Max probability (the default confidence score)."""
        return max(self.probabilities)

    @property
    def expected_log2_speedup(self) -> float:
        return bins.expected_log2_speedup(self.probabilities)

    @property
    def abstained(self) -> bool:
        return self.parse_status is ParseStatus.ABSTAINED

    @classmethod
    def abstention(cls, forecaster: str, candidate_id: str, problem_id: str,
                   hardware_key: str, reason: str, **kw) -> "Forecast":
        return cls(forecaster=forecaster, candidate_id=candidate_id, problem_id=problem_id,
                   hardware_key=hardware_key, probabilities=(1.0,) * bins.N_BINS,
                   reasoning=reason, raw_sum=0.0, parse_status=ParseStatus.ABSTAINED, **kw)


# --------------------------------------------------------------------------- run evidence
@dataclass(frozen=True)
class RunEvidence:
    """What a search run knows about its problem on its GPU beyond a forecaster's training
    data; the input of `Forecaster.for_run`. Built by the run from its events, so a resumed run
    passes the same evidence as an uninterrupted one at the same step.

    measurements: the run's measurements so far, in measurement order (any status).
    kernels: (candidate, measured speedup over the reference) of the run's correct kernels, in
      measurement order, to correct forecasts by; empty when the run does not adapt forecasts.
    prior_reference_ms: the problem's median reference time (ms) on the GPU in the database
      when the run started, None when there was none.
    """

    measurements: tuple[Measurement, ...] = ()
    kernels: tuple[tuple[Candidate, float], ...] = ()
    prior_reference_ms: float | None = None

    def reference_ms(self) -> float | None:
        """The problem's reference time in ms: the median of the run's measured reference times
        (finite, > 0) once there are any, else `prior_reference_ms`."""
        times = [float(m.reference_ms) for m in self.measurements
                 if m.reference_ms is not None and math.isfinite(m.reference_ms) and m.reference_ms > 0]
        return float(statistics.median(times)) if times else self.prior_reference_ms
