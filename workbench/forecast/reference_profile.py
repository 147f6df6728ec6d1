"""What the PyTorch reference launches: a trace of its forward on the meta device.

The learned forecaster's hardest job is the reference side of the speedup: how many kernels
the reference launches, how much of its time goes to vendor libraries (cuBLAS matmuls, cuDNN
convolutions, fused attention) that a Triton candidate rarely beats, and how much to chains of
elementwise kernels that a fused candidate beats easily. `profile(problem)` answers by running
the reference's `forward` on **meta tensors** (shapes and dtypes only: no memory, no arithmetic,
no GPU) under a dispatch mode that records every ATen op: its class, its bytes read and written
and its FLOPs. The reference is trusted problem-library code (the same code `workbench.problems.load_source`
imports); candidates are never run here.

A reference that cannot be traced to the end (an op without a meta kernel, such as the
data-dependent `nonzero`, or an import error) gives `ReferenceProfile.traced == False` with the
ops recorded before the failure; features say so and the model leans on the static source
features.

Units: bytes and FLOPs at the problem's full size; times in ms.
"""
from __future__ import annotations

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from workbench.problems import load_source
from workbench.problems.ops import CLASSES, classify_op
from workbench.records import Problem

_LIBRARY = ("matmul", "conv", "attention")


@dataclass(frozen=True)
class OpRecord:
    """One kernel-launching ATen op of the reference: class, dtype, bytes, FLOPs."""

    name: str
    cls: str
    dtype: str  # "fp32" | "bf16" | "fp16" | "other"
    bytes: float
    flops: float


@dataclass(frozen=True)
class ReferenceProfile:
    """The kernel-launching ops of one reference forward (see module doc)."""

    traced: bool
    ops: tuple[OpRecord, ...] = ()
    error: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    #: Shapes of the forward's tensor inputs (the problem's sizes), largest first.
    input_shapes: tuple[tuple[int, ...], ...] = ()

    @property
    def launches(self) -> int:
        return len(self.ops)

    @property
    def total_bytes(self) -> float:
        return float(sum(o.bytes for o in self.ops))

    @property
    def total_flops(self) -> float:
        return float(sum(o.flops for o in self.ops))


def _dtype_name(dtype) -> str:
    import torch

    return {torch.float32: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}.get(dtype, "other")


def _numel(shape) -> int:
    return int(math.prod(int(s) for s in shape))


def _flops(cls: str, name: str, args, out_tensors) -> float:
    """FLOPs of a library op from its shapes (0 for others: they are bandwidth-bound)."""
    import torch

    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    out_numel = sum(_numel(t.shape) for t in out_tensors)
    if cls == "matmul" and tensors:
        # 2 * output elements * contraction length; the contraction is the last dim of the
        # first matrix operand (mm, bmm, addmm's second arg, ...).
        mats = [t for t in tensors if t.dim() >= 2] or tensors
        k = int(mats[0].shape[-1]) if name not in ("addmm", "baddbmm", "_addmm_activation") \
            else int((mats[1] if len(mats) > 1 else mats[0]).shape[-1])
        return 2.0 * out_numel * k
    if cls == "conv" and len(tensors) >= 2:
        w = tensors[1]
        per_out = _numel(w.shape[1:])  # Cin/groups * kernel window
        return 2.0 * (out_numel if out_tensors else 0) * per_out
    if cls == "attention" and len(tensors) >= 3:
        q, k_ = tensors[0], tensors[1]
        return 4.0 * _numel(q.shape[:-1]) * int(k_.shape[-2]) * int(q.shape[-1])
    return 0.0


def _trace(problem: Problem) -> ReferenceProfile:
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    records: list[OpRecord] = []

    class _Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            name = func.overloadpacket.__name__
            cls = classify_op(name)
            if cls is not None:
                flat_in = [a for a in tree_flatten((args, kwargs))[0] if isinstance(a, torch.Tensor)]
                flat_out = [o for o in tree_flatten(out)[0] if isinstance(o, torch.Tensor)]
                nbytes = sum(_numel(t.shape) * t.element_size() for t in flat_in + flat_out)
                dt = flat_out[0].dtype if flat_out else (flat_in[0].dtype if flat_in else None)
                records.append(OpRecord(name=name, cls=cls,
                                        dtype=_dtype_name(dt) if dt is not None else "other",
                                        bytes=float(nbytes),
                                        flops=_flops(cls, name, flat_in, flat_out)))
            return out

    shapes: list[tuple[int, ...]] = []
    error = ""
    try:
        loaded = load_source(problem.source, name=problem.id)
        with torch.device("meta"):
            init = loaded.get_init_inputs()
            model = loaded.Model(*init)
            inputs = loaded.get_inputs()
        inputs = [x.to("meta") if isinstance(x, torch.Tensor) else x for x in inputs]
        shapes = sorted((tuple(int(s) for s in x.shape) for x in inputs
                         if isinstance(x, torch.Tensor)), key=_numel, reverse=True)
        model = model.to("meta")
        with torch.no_grad(), _Recorder():
            model(*inputs)
    except Exception as e:  # noqa: BLE001 - any failure means "not traced", never a crash
        # Data-dependent shapes (nonzero, masked_select) have no meta kernel: the ops recorded
        # before the failure are kept as a partial profile.
        error = f"{type(e).__name__}: {e}"[:300]
    counts = {c: 0 for c in CLASSES}
    for r in records:
        counts[r.cls] += 1
    return ReferenceProfile(traced=not error, ops=tuple(records), error=error, counts=counts,
                            input_shapes=tuple(shapes))


_CACHE: "OrderedDict[str, ReferenceProfile]" = OrderedDict()
_LOCK = threading.Lock()


def profile(problem: Problem) -> ReferenceProfile:
    """The reference profile of `problem`, cached by its source hash (see module doc)."""
    key = problem.source_hash
    with _LOCK:
        hit = _CACHE.get(key)
    if hit is not None:
        return hit
    if not problem.source.strip():
        prof = ReferenceProfile(traced=False, error="no reference source")
    else:
        prof = _trace(problem)
    with _LOCK:
        _CACHE[key] = prof
        while len(_CACHE) > 4096:
            _CACHE.popitem(last=False)
    return prof


@dataclass(frozen=True)
class ReferenceTime:
    """Roofline time of a traced reference on one GPU, ms, split by where it goes."""

    ms: float
    library_ms: float  # matmul / conv / attention kernels
    launch_ms: float   # per-launch overhead

    @property
    def library_share(self) -> float:
        return self.library_ms / self.ms if self.ms > 0 else 0.0

    @property
    def launch_share(self) -> float:
        return self.launch_ms / self.ms if self.ms > 0 else 0.0


#: Fraction of peak a vendor kernel reaches (library ops) and a PyTorch elementwise/reduction
#: kernel reaches (the rest). Fixed a priori, not fitted.
LIBRARY_EFFICIENCY = 0.75
OTHER_EFFICIENCY = 0.8


def reference_time(prof: ReferenceProfile, peaks, launch_ms: float) -> ReferenceTime:
    """Sum over the reference's ops of max(FLOPs / peak, bytes / bandwidth) / efficiency, plus
    `launch_ms` per launch. `peaks` is a `features.Peaks`. PyTorch runs fp32 matmuls and
    convolutions without TF32 (the executor's setting) and bf16/fp16 ones on tensor cores."""
    total = lib = 0.0
    for op in prof.ops:
        flops_s = peaks.flops_for(op.dtype, op.dtype in ("bf16", "fp16"))
        t = max(op.flops / flops_s, op.bytes / peaks.dram_bytes_s) * 1e3
        if op.cls in _LIBRARY:
            t /= LIBRARY_EFFICIENCY
            lib += t
        else:
            t /= OTHER_EFFICIENCY
        total += t
    launches = prof.launches * launch_ms
    return ReferenceTime(ms=total + launches, library_ms=lib, launch_ms=launches)
