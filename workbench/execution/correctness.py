"""Correctness of a candidate against the reference: tolerances and output comparison."""
from __future__ import annotations

from typing import Any

# Per-dtype tolerances (atol, rtol). fp32 is strict so TF32 or bf16 shortcuts fail it; the
# loose tolerance is used only to name the cause ("precision lowered") of an fp32 failure.
TOLERANCES = {"float32": (1e-4, 1e-4), "float64": (1e-7, 1e-7), "bfloat16": (2e-2, 2e-2),
              "float16": (1e-2, 1e-2)}
LOOSE = (2e-2, 2e-2)
#: fp32 problems built on matmuls/convolutions may use TF32 tensor cores (Triton's default for
#: tl.dot): relative 2e-3, absolute 2e-3 times the RMS of the reference output.
MATMUL_FP32 = 2e-3
_MATMUL_WORDS = {"matmul", "conv", "attention", "gemm", "bmm", "linear"}


def is_matmul_like(category: str, tags) -> bool:
    """Whether a problem's main work is a matmul or convolution (by its category and tags)."""
    words = {category, *tags}
    return any(w.split("-")[0] in _MATMUL_WORDS for w in words if w)


def tolerance_for(dtype) -> tuple[float, float]:
    return TOLERANCES.get(str(dtype).replace("torch.", ""), (1e-4, 1e-4))


def _flatten(x: Any) -> list:
    return list(x) if isinstance(x, (tuple, list)) else [x]


def compare_outputs(out: Any, ref: Any, reduced_k: int = 1, matmul_like: bool = False,
                    contract: Any = None) -> tuple[bool, str]:
    """(ok, reason). Checks type, count, shape, dtype, device, contiguity, finiteness and values.

    The tolerance is the run's `contract` (`workbench.problems.contract.Contract`; None: the
    default, the project's rules). Under the project's rules it is `tolerance_for` the output's
    dtype, and `reduced_k` scales the fp32 absolute tolerance for sums over long dimensions (a
    sum of k float32 terms in another order differs by about sqrt(k) ulps) and `matmul_like`
    (fp32 only) accepts TF32 tensor-core accuracy, relative to the output's scale. Any other
    contract gives a fixed atol / rtol (`Contract.atol_rtol`), with no scaling.
    """
    import torch

    outs, refs = _flatten(out), _flatten(ref)
    if len(outs) != len(refs):
        return False, f"returned {len(outs)} output(s), the reference returns {len(refs)}"
    for i, (o, r) in enumerate(zip(outs, refs)):
        tag = f"output {i}" if len(outs) > 1 else "output"
        if not isinstance(r, torch.Tensor):
            if o != r:
                return False, f"{tag}: {o!r} != reference {r!r}"
            continue
        if not isinstance(o, torch.Tensor):
            return False, f"{tag}: expected a tensor, got {type(o).__name__}"
        if o.shape != r.shape:
            return False, f"{tag}: shape {tuple(o.shape)} != reference {tuple(r.shape)}"
        if o.dtype != r.dtype:
            return False, f"{tag}: dtype {o.dtype} != reference {r.dtype}"
        if o.device != r.device:
            return False, f"{tag}: device {o.device} != reference {r.device}"
        if r.is_contiguous() and not o.is_contiguous():
            return False, f"{tag}: not contiguous (strides {o.stride()}) while the reference's output is"
        if o.is_floating_point():
            bad = ~torch.isfinite(o)
            if bool(bad.any()) and not bool((~torch.isfinite(r))[bad].all()):
                return False, f"{tag}: {int(bad.sum())} NaN/Inf value(s) where the reference is finite"
        fixed = contract.atol_rtol(o.dtype) if contract is not None else None
        of, rf = o.double(), r.double()
        atol, rtol = _atol_rtol(o.dtype, rf, reduced_k, matmul_like, fixed)
        finite = torch.isfinite(rf)
        diff = (of - rf).abs()
        tol = atol + rtol * rf.abs()
        viol = (diff > tol) & finite
        if bool(viol.any()):
            n = int(viol.sum())
            worst = float(diff[finite].max())
            msg = f"{tag}: {n} of {o.numel()} values out of tolerance (atol={atol:g}, rtol={rtol:g}); max abs diff {worst:.3g}"
            if o.dtype == torch.float32 and atol < LOOSE[0] and \
                    not bool(((diff > LOOSE[0] + LOOSE[1] * rf.abs()) & finite).any()):
                msg += "; passes only at a bf16/TF32 tolerance: precision was lowered"
            return False, msg
    return True, ""


def _atol_rtol(dtype: Any, rf: Any, reduced_k: int, matmul_like: bool, fixed: tuple | None) -> tuple[float, float]:
    """The (atol, rtol) compare_outputs uses for an output of `dtype` against the reference
    `rf` (float64): the contract's `fixed` pair, else the project's rules (see there)."""
    import torch

    atol, rtol = fixed or tolerance_for(dtype)
    if dtype == torch.float32 and fixed is None:
        atol *= max(1.0, reduced_k ** 0.5 / 8)
        if matmul_like:
            fin = rf[torch.isfinite(rf)]
            rms = float(fin.pow(2).mean().sqrt()) if fin.numel() else 1.0
            atol, rtol = max(atol, MATMUL_FP32 * rms), MATMUL_FP32
    return atol, rtol


def tolerance_ratio(out: Any, ref: Any, reduced_k: int = 1, matmul_like: bool = False, contract: Any = None) -> float:
    """How far outside the tolerance `out` lies: the largest |out - ref| / (atol + rtol |ref|)
    over finite reference values (compare_outputs's atol and rtol), over every output; 1 or
    less is within the tolerance; inf for a mismatch of kind (count, shape, dtype, a plain
    value, NaN where the reference is finite)."""
    import torch

    outs, refs = _flatten(out), _flatten(ref)
    if len(outs) != len(refs):
        return float("inf")
    worst = 0.0
    for o, r in zip(outs, refs):
        if not isinstance(r, torch.Tensor):
            if o != r:
                return float("inf")
            continue
        if not isinstance(o, torch.Tensor) or o.shape != r.shape or o.dtype != r.dtype:
            return float("inf")
        if not o.numel():
            continue
        of, rf = o.double(), r.double()
        finite = torch.isfinite(rf)
        if o.is_floating_point() and bool((~torch.isfinite(of) & finite).any()):
            return float("inf")
        fixed = contract.atol_rtol(o.dtype) if contract is not None else None
        atol, rtol = _atol_rtol(o.dtype, rf, reduced_k, matmul_like, fixed)
        ratio = ((of - rf).abs() / (atol + rtol * rf.abs()))[finite]
        if ratio.numel():
            worst = max(worst, float(ratio.max()))
    return worst


def same_tensors(a: Any, b: Any) -> bool:
    """Exact equality of (possibly nested) tensors; used to detect mutated inputs."""
    import torch

    la, lb = _flatten(a), _flatten(b)
    if len(la) != len(lb):
        return False
    for x, y in zip(la, lb):
        if isinstance(x, torch.Tensor):
            if not isinstance(y, torch.Tensor) or x.shape != y.shape or not torch.equal(x, y):
                if not (x.is_floating_point() and torch.equal(torch.nan_to_num(x), torch.nan_to_num(y))):
                    return False
        elif x != y:
            return False
    return True
