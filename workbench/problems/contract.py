"""The contract a run judges candidates by: the precision a problem runs at, the tolerance its
outputs are compared with, and how many seeded input trials each candidate must pass.

KernelBench runs a problem at a chosen precision: the reference and the candidate (parameters
and buffers) and every floating-point input are cast to fp32, fp16 or bf16, and a candidate's
outputs must match at atol = rtol = 1e-4 for fp32 and 1e-2 for fp16 / bf16 (its v0 and v0.1
releases used 1e-2 for fp32 too: the "legacy" tolerance), on several random input trials drawn
from fixed seeds. The workbench's own default is stricter in places and looser in others, and
is what its shipped measurements were taken with, so it stays the default:

    Contract()                          # the file as written, the project's tolerances
    Contract("fp16")                    # cast to fp16, judged at the benchmark's 1e-2
    Contract("fp32")                    # cast to fp32, judged at the benchmark's 1e-4
    Contract("fp32", "legacy")          # cast to fp32, judged at 1e-2 (KernelBench v0 / v0.1)
    Contract("native", "kernelbench")   # the file's own dtypes, the benchmark's tolerance for each
    Contract("bf16", "2e-2", trials=5)  # any atol = rtol, five seeded trials

Which tolerance applies when (`tolerance`, compared per output element as
|out - ref| <= atol + rtol * |ref|, non-finite reference values skipped, a NaN where the reference
is finite always failing):

- "project" (the default when no precision is asked for; `execution/correctness.py`): by the
  output's dtype, fp32 1e-4, fp64 1e-7, fp16 1e-2, bf16 2e-2; for fp32 the absolute tolerance
  grows with the square root of the longest size (sums in another order), and for problems whose
  category or tags say matmul / convolution / attention it is 2e-3 relative and 2e-3 times the
  output's RMS absolute (TF32 tensor cores).
- "kernelbench" (the default when a precision is asked for): atol = rtol = 1e-4 at fp32 and
  1e-2 at fp16 / bf16, by the run's precision (by each output's dtype for "native"), with no
  scaling.
- "legacy": atol = rtol = 1e-2 whatever the precision.
- a number ("1e-3"): atol = rtol = that number.

`trials` (None: the executor's default, 3 seeds on a GPU and 2 on the CPU) sets the correctness
seeds 0..trials-1: the judge (`execution/session.py`) runs that many trials, each on fresh
inputs it draws from its own random source (the first seed builds the models' weights), and its
other checks (a changed element, a second shape, checked timed calls) come on top.

A contract travels as two strings in the executor's options (`options()`), so the judge's clean
processes (the reference's preparation and worker, the timer that compares outputs) and the
candidate's worker read the same one, and it is recorded with every measurement
(`records.Measurement.precision`, `.tolerance`, `.trials`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from workbench.errors import ConfigError

#: Precisions a run may ask for; "native" runs the file's own dtypes (no cast).
PRECISIONS = ("native", "fp32", "fp16", "bf16")
_TORCH_NAMES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}
#: Named tolerances (besides a number).
TOLERANCES = ("project", "kernelbench", "legacy")
#: The benchmark's atol = rtol per precision, and its legacy value.
KERNELBENCH = {"float32": 1e-4, "float16": 1e-2, "bfloat16": 1e-2}
LEGACY = 1e-2
#: The benchmark's default number of correctness trials.
KERNELBENCH_TRIALS = 5


def _tolerance_text(value: Any) -> str:
    text = str(value).strip().lower()
    if text in TOLERANCES:
        return text
    try:
        number = float(text)
    except ValueError:
        raise ConfigError(f"tolerance {value!r}: use project, kernelbench, legacy or a number "
                          "(atol = rtol, e.g. 1e-3)") from None
    if not (math.isfinite(number) and 0 < number < 1):
        raise ConfigError(f"tolerance {value!r}: a number must be above 0 and below 1 (atol = rtol)")
    return repr(number)


@dataclass(frozen=True)
class Contract:
    """Precision, tolerance and trials of a run (see module doc). An empty `tolerance` takes the
    default for the precision: "project" for "native", else "kernelbench"."""

    precision: str = "native"
    tolerance: str = ""
    trials: int | None = None

    def __post_init__(self) -> None:
        precision = str(self.precision or "native").strip().lower()
        if precision not in PRECISIONS:
            raise ConfigError(f"precision {self.precision!r}: use one of {', '.join(PRECISIONS)}")
        object.__setattr__(self, "precision", precision)
        tolerance = self.tolerance or ("project" if precision == "native" else "kernelbench")
        object.__setattr__(self, "tolerance", _tolerance_text(tolerance))
        if self.trials is not None:
            if isinstance(self.trials, bool) or not isinstance(self.trials, int) or not 1 <= self.trials <= 100:
                raise ConfigError(f"trials {self.trials!r}: a whole number of correctness trials, 1 to 100")

    # ------------------------------------------------------------------ values
    @property
    def dtype_name(self) -> str | None:
        """The torch dtype's name a run casts to ("float16"), None for native."""
        return _TORCH_NAMES.get(self.precision)

    @property
    def torch_dtype(self):
        """The torch dtype a run casts to, None for native."""
        import torch

        return getattr(torch, self.dtype_name) if self.dtype_name else None

    @property
    def is_project(self) -> bool:
        """Judged by the project's per-dtype rules (module doc), not a fixed atol / rtol."""
        return self.tolerance == "project"

    def atol_rtol(self, dtype: Any = None) -> tuple[float, float] | None:
        """(atol, rtol) for an output of `dtype` (a torch dtype or its name), None under the
        project's rules. "kernelbench" keys by the run's precision, or by `dtype` for native
        (an unknown dtype: 1e-4)."""
        if self.tolerance == "project":
            return None
        if self.tolerance == "legacy":
            return LEGACY, LEGACY
        if self.tolerance == "kernelbench":
            key = self.dtype_name or str(dtype).replace("torch.", "")
            value = KERNELBENCH.get(key, KERNELBENCH["float32"])
            return value, value
        value = float(self.tolerance)
        return value, value

    def describe(self) -> str:
        """One line for reports: `fp16, atol = rtol = 0.01 (kernelbench), 5 trials`."""
        if self.precision == "native":
            head = "native dtypes (the file as written)"
        else:
            head = f"{self.precision} (model and inputs cast)"
        if self.tolerance == "project":
            tol = "the project's tolerances (fp32 1e-4 scaled for long sums and matmuls, fp16 1e-2, bf16 2e-2)"
        elif self.tolerance == "kernelbench" and self.precision == "native":
            tol = "KernelBench's tolerance per output dtype (fp32 1e-4, fp16 / bf16 1e-2)"
        else:
            atol, _ = self.atol_rtol()  # type: ignore[misc]
            tol = f"atol = rtol = {atol:g} ({self.tolerance})" if self.tolerance in TOLERANCES else \
                f"atol = rtol = {atol:g}"
        trials = f"{self.trials} trials" if self.trials else "the executor's default trials"
        return f"{head}, {tol}, {trials}"

    # ------------------------------------------------------------------ casting
    def cast_model(self, model: Any) -> Any:
        """`model` with its floating-point parameters and buffers cast to the precision (as the
        benchmark does, `model.to(dtype)`); unchanged for native."""
        dtype = self.torch_dtype
        return model if dtype is None else model.to(dtype)

    def cast_inputs(self, inputs: Any) -> Any:
        """`inputs` with every floating-point tensor (in lists and tuples too) cast to the
        precision; integer and boolean tensors and other values unchanged."""
        dtype = self.torch_dtype
        if dtype is None:
            return inputs
        import torch

        def one(x: Any) -> Any:
            if isinstance(x, torch.Tensor):
                return x.to(dtype) if x.is_floating_point() else x
            if isinstance(x, (list, tuple)):
                return type(x)(one(v) for v in x)
            return x

        return one(inputs)

    # ------------------------------------------------------------------ options
    def options(self) -> dict[str, Any]:
        """The executor options of this contract (`MeasureOptions` fields)."""
        out: dict[str, Any] = {"precision": self.precision, "tolerance": self.tolerance}
        if self.trials:
            out["seeds"] = list(range(self.trials))
        return out

    @classmethod
    def from_options(cls, options: Mapping[str, Any] | Any) -> "Contract":
        """The contract of executor options (a mapping or a `MeasureOptions`); a missing
        precision or tolerance is the default."""
        get = options.get if isinstance(options, Mapping) else (lambda k, d=None: getattr(options, k, d))
        seeds = get("seeds", None)
        return cls(str(get("precision", "native") or "native"), str(get("tolerance", "") or ""),
                   len(seeds) if seeds else None)

    def to_dict(self) -> dict[str, Any]:
        return {"precision": self.precision, "tolerance": self.tolerance, "trials": self.trials}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> "Contract":
        d = dict(d or {})
        unknown = set(d) - {"precision", "tolerance", "trials"}
        if unknown:
            raise ConfigError(f"a contract has no field(s) {sorted(unknown)}; fields: precision, tolerance, trials")
        return cls(**d)


#: The default contract (what the shipped measurements were taken with).
DEFAULT = Contract()
