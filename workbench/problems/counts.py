"""FLOPs and bytes of a problem derived from its reference, for files that declare none.

A KernelBench-style file rarely carries `flops()` / `bytes_moved()`. `derive_counts` runs the
reference's `forward` on the **meta device** (shapes and dtypes only: no memory, no arithmetic;
`workbench.problems.trace.run`, which sees every ATen op), and returns:

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

from workbench.problems import trace
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
    """Counts of a `LoadedProblem` traced on the meta device (see module doc; the trace is
    `workbench.problems.trace.run`). Never raises for an error in the problem's code: that gives
    `source == "unknown"` with the reason."""
    import torch
    from torch.utils._pytree import tree_flatten
    from torch.utils.flop_counter import flop_registry

    totals = {"flops": 0.0, "op_bytes": 0.0}

    def count(op: trace.Op) -> None:
        cls = classify_op(op.name)
        if cls is None:
            return
        packet = op.func.overloadpacket
        totals["op_bytes"] += float(sum(_nbytes(t) for t in op.inputs + op.outputs))
        if packet in flop_registry:
            totals["flops"] += float(flop_registry[packet](*op.args, **op.kwargs, out_val=op.result))
        elif op.name in NORM_OPS or op.name.rstrip("_") in NORM_OPS:
            per = _RMS_FLOPS_PER_ELEM if "rms" in op.name else _NORM_FLOPS_PER_ELEM
            totals["flops"] += per * (_numel(op.outputs[0].shape) if op.outputs else 0)
        else:
            sizes = [_numel(t.shape) for t in op.inputs + op.outputs]
            totals["flops"] += float(max(sizes) if sizes else 0)

    try:
        run = trace.run(loaded, on_op=count)
    except trace.TraceError as e:
        return Counts(0.0, 0.0, 0.0, UNKNOWN, error=str(e)[:300])
    seen: set[int] = set()
    min_bytes = 0
    outs = [o for o in tree_flatten(run.output)[0] if isinstance(o, torch.Tensor)]
    tensors = [x for x in tree_flatten(run.inputs)[0] if isinstance(x, torch.Tensor)] + outs
    tensors += list(run.model.parameters()) + list(run.model.buffers())
    for t in tensors:
        if id(t) not in seen:
            seen.add(id(t))
            min_bytes += _nbytes(t)
    return Counts(flops=totals["flops"], min_bytes=float(min_bytes), op_bytes=totals["op_bytes"],
                  source=DERIVED)

