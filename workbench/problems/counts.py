"""FLOPs and bytes of a problem derived from its reference, for files that declare none.

A KernelBench-style file rarely carries `flops()` / `bytes_moved()`. `derive_counts` runs the
reference's `forward` on the **meta device** (shapes and dtypes only: no memory, no arithmetic)
under a dispatch mode that sees every ATen op, and returns:

- `flops`: per op, summed. Matmuls, convolutions and fused attention use PyTorch's own FLOP
  formulas (`torch.utils.flop_counter.flop_registry`, 2 FLOPs per multiply-add); a
  normalisation counts 8 FLOPs per output element (mean 1, variance 3, normalise 2, scale and
  shift 2; an RMS norm 4);
  any other op that launches a kernel counts 1 FLOP per element of its largest operand.
- `op_bytes`: per op, the bytes of its tensor inputs and outputs, summed: what an unfused
  reference reads and writes.
- `min_bytes`: the minimum-traffic bound for the whole module: its tensor inputs, outputs,
  parameters and buffers, each once. This is `Problem.bytes_moved` for a derived problem (the
  same meaning as a declared `bytes_moved()`: the least DRAM traffic any kernel needs).

The reference is problem code the user chose to load (the same code `workbench.problems.load_source` runs);
candidates are never traced here. A reference that cannot be traced (an op without a meta
kernel, data-dependent shapes, an error) gives `source == "unknown"` with zero counts and the
reason; callers never see an exception from user code.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from workbench.problems.ops import NORM_OPS, classify_op

#: Where a problem's counts came from.
DECLARED, DERIVED, UNKNOWN = "declared", "derived", "unknown"
_NORM_FLOPS_PER_ELEM = 8.0  # mean 1, variance 3, normalise 2, scale and shift 2
_RMS_FLOPS_PER_ELEM = 4.0   # square-and-sum 2, normalise 1, scale 1


@dataclass(frozen=True)
class Counts:
    """A problem's counts at the size it was loaded with; FLOPs and bytes."""

    flops: float
    min_bytes: float
    op_bytes: float
    source: str  # DECLARED | DERIVED | UNKNOWN
    error: str = ""

    @property
    def bytes_moved(self) -> float:
        """The minimum-traffic bound (what `Problem.bytes_moved` stores)."""
        return self.min_bytes


def _numel(shape) -> int:
    return int(math.prod(int(s) for s in shape))


def _nbytes(t) -> int:
    return _numel(t.shape) * t.element_size()


def derive_counts(loaded: Any) -> Counts:
    """Counts of a `LoadedProblem` traced on the meta device (see module doc). Never raises for
    an error in the problem's code: that gives `source == "unknown"`."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten
    from torch.utils.flop_counter import flop_registry

    totals = {"flops": 0.0, "op_bytes": 0.0}

    class _Counter(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            packet = func.overloadpacket
            name = packet.__name__
            cls = classify_op(name)
            if cls is None:
                return out
            flat_in = [a for a in tree_flatten((args, kwargs))[0] if isinstance(a, torch.Tensor)]
            flat_out = [o for o in tree_flatten(out)[0] if isinstance(o, torch.Tensor)]
            totals["op_bytes"] += float(sum(_nbytes(t) for t in flat_in + flat_out))
            if packet in flop_registry:
                totals["flops"] += float(flop_registry[packet](*args, **kwargs, out_val=out))
            elif name in NORM_OPS or name.rstrip("_") in NORM_OPS:
                per = _RMS_FLOPS_PER_ELEM if "rms" in name else _NORM_FLOPS_PER_ELEM
                totals["flops"] += per * (_numel(flat_out[0].shape) if flat_out else 0)
            else:
                sizes = [_numel(t.shape) for t in flat_in + flat_out]
                totals["flops"] += float(max(sizes) if sizes else 0)
            return out

    try:
        with torch.device("meta"):
            model = loaded.Model(*loaded.get_init_inputs())
            inputs = loaded.get_inputs()
        inputs = [x.to("meta") if isinstance(x, torch.Tensor) else x for x in inputs]
        model = model.to("meta")
        with torch.no_grad(), _Counter():
            out = model(*inputs)
    except Exception as e:  # noqa: BLE001 - any failure in user code means "unknown", never a crash
        return Counts(0.0, 0.0, 0.0, UNKNOWN, error=f"{type(e).__name__}: {e}"[:300])
    seen: set[int] = set()
    min_bytes = 0
    outs = [o for o in tree_flatten(out)[0] if isinstance(o, torch.Tensor)]
    tensors = [x for x in tree_flatten(inputs)[0] if isinstance(x, torch.Tensor)] + outs
    tensors += list(model.parameters()) + list(model.buffers())
    for t in tensors:
        if id(t) not in seen:
            seen.add(id(t))
            min_bytes += _nbytes(t)
    return Counts(flops=totals["flops"], min_bytes=float(min_bytes), op_bytes=totals["op_bytes"],
                  source=DERIVED)

