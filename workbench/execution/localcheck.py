"""The in-process correctness check, for code the workbench trusts (its own zoo kernels,
template renderings and mutation children in tests).

It builds the reference and the candidate in this process and compares them on several seeds
(candidate before and after the reference, inputs checked for mutation, outputs for aliasing,
subclassing and degeneracy, a call on inputs with one element changed and on fresh inputs).
The executor never uses it on a candidate: there the candidate's process holds no reference
(worker.py), and the judge's clean processes compare its outputs (timer.py, session.py).
"""
from __future__ import annotations

import contextlib
from typing import Any

from workbench.execution import correctness, guards
from workbench.execution.candidate import at_sizes
from workbench.execution.gpu_lock import GpuLock
from workbench.execution.models import clone, copy_state, make_inputs
from workbench.problems.loaded import SIZES_ATTR


class Verdict(Exception):
    """Ends a check or a job with a status (a non-ok result and its reason)."""

    def __init__(self, status: str, reason: str):
        super().__init__(reason)
        self.status, self.reason = status, reason


_inputs, _clone = make_inputs, clone


def _build(problem_mod, cand_mod, seed: int, contract=None):
    """Model and ModelNew with the same seed and the reference's weights, not yet moved to a
    device (a CUDA C++ candidate may build its extension here: host work, outside the lock).
    ModelNew is cast to the `contract`'s precision (the module's Model casts itself when it was
    loaded at that precision)."""
    import torch

    init = problem_mod.get_init_inputs()
    torch.manual_seed(seed)
    ref = problem_mod.Model(*init)
    torch.manual_seed(seed)
    try:
        new = cand_mod.ModelNew(*init)
    except Exception as e:  # noqa: BLE001
        raise Verdict("runtime_error", f"ModelNew(*get_init_inputs()) failed: {type(e).__name__}: {e}") from e
    if contract is not None:
        new = contract.cast_model(new)
    copy_state(ref, new)
    return ref, new


def _sync(device):
    import torch

    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def classify_error(e: BaseException, what: str) -> tuple[str, str]:
    """(status, reason) of an exception raised by a candidate's call."""
    import torch

    name = type(e).__name__
    if "CompilationError" in name or "CompileError" in name:
        return "compile_error", f"{what}: {name}: {str(e)[:2000]}"
    if isinstance(e, torch.cuda.OutOfMemoryError) or "out of memory" in str(e):
        return "runtime_error", f"{what}: out of GPU memory: {str(e)[:500]}"
    if "ninja" in str(e).lower() or "Error building extension" in str(e):
        return "compile_error", f"{what}: {name}: {str(e)[-3000:]}"
    return "runtime_error", f"{what}: {name}: {str(e)[:2000]}"


def _run(model, inputs, device, what: str):
    import torch

    try:
        with torch.no_grad():
            out = model(*inputs)
        _sync(device)
        return out
    except Exception as e:  # noqa: BLE001
        raise Verdict(*classify_error(e, what)) from e


def _poison(device, like) -> None:
    """Fill freed memory with garbage so stale values cannot pass for results.

    Allocates blocks of the size of each tensor in `like` (already freed by the caller),
    fills them with NaN (floats) or a sentinel (integers) and frees them again. With the CUDA
    caching allocator the next allocation of that size gets this block back, so a kernel that
    leaves outputs unwritten (or "reuses" the reference's freed output) returns garbage.
    """
    import torch

    for shape, dtype in like:
        if dtype.is_floating_point:
            blk = torch.full(shape, float("nan"), dtype=dtype, device=device)
        else:
            blk = torch.full(shape, 0x5A if dtype != torch.bool else 1, dtype=dtype, device=device)
        del blk


def _specs(out) -> list:
    import torch

    return [(t.shape, t.dtype) for t in correctness._flatten(out) if isinstance(t, torch.Tensor)]


def _ptrs(out) -> set[int]:
    import torch

    return {t.untyped_storage().data_ptr() for t in correctness._flatten(out)
            if isinstance(t, torch.Tensor) and t.numel()}


def _nudged(inputs):
    """A copy of `inputs` with one element of each float tensor changed (the last one).

    A result cache keyed by a partial fingerprint of the input (a few elements, the pointer,
    the shape) returns the previous result for it; an honest kernel computes the new answer.
    """
    import torch

    out = _clone(inputs)
    for t in correctness._flatten(out):
        if isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel():
            t.view(-1)[-1] += 1.5
    return out


def _check_seed(problem_mod, ref, new, device, seed: int, first: bool, reduced_k: int, label: str,
                matmul_like: bool, contract=None) -> None:
    import torch

    torch.manual_seed(1000 + seed)
    inputs = _inputs(problem_mod, device)
    pristine = _clone(inputs)
    freed_ptrs: set[int] = set()
    if not first:
        # Candidate right after a reference run whose output was freed and poisoned.
        probe = _run(ref, _clone(inputs), device, "reference")
        specs, freed_ptrs = _specs(probe), _ptrs(probe)
        del probe
        _poison(device, specs)
    before = guards.RuntimeSnapshot()
    out = _run(new, inputs, device, f"candidate ({label}, seed {seed})")
    changes = guards.RuntimeSnapshot().changes_since(before)
    if changes:
        raise Verdict("cheat_suspected", "; ".join(changes))
    if not correctness.same_tensors(inputs, pristine):
        raise Verdict("cheat_suspected", "the candidate modified its inputs in place")
    ref_out = _run(ref, _clone(pristine), device, "reference")
    found = guards.output_findings(out, inputs, correctness._flatten(ref_out))
    if found:
        raise Verdict("cheat_suspected", "; ".join(found))
    ok, why = correctness.compare_outputs(out, ref_out, reduced_k, matmul_like, contract)
    if not ok:
        deg = guards.degenerate_finding(out, ref_out)
        if deg:
            raise Verdict("cheat_suspected", f"{deg}; {label}, seed {seed}: {why}")
        if freed_ptrs & _ptrs(out) and str(device).startswith("cuda"):
            why += ("; the output sits in the reference's freed output memory and was not fully "
                    "written (it relied on the reference's leftover values)")
        raise Verdict("incorrect", f"{label}, seed {seed}: {why}")
    stale = _clone(out)
    del out
    # Again, on inputs that differ from the last ones in one element, then on fresh inputs:
    # a result cached across calls (by pointer, shape or a partial fingerprint) shows up here.
    for what, nxt in (("one input element changed", _nudged(pristine)),
                      ("fresh inputs", None)):
        if nxt is None:
            torch.manual_seed(5000 + seed)
            nxt = _inputs(problem_mod, device)
        again = _run(new, _clone(nxt), device, f"candidate ({label}, {what})")
        ref_again = _run(ref, nxt, device, "reference")
        ok, why = correctness.compare_outputs(again, ref_again, reduced_k, matmul_like, contract)
        if not ok:
            if correctness.same_tensors(again, stale):
                raise Verdict("cheat_suspected", f"{label}, call with {what}: returned the previous "
                              "call's result (results cached across calls)")
            raise Verdict("incorrect", f"{label}, call with {what}: {why} (state kept between calls?)")


def check_correctness(problem_mod, cand_mod, device, seeds, reduced_k: int, label: str,
                      matmul_like: bool | None = None, gpu: GpuLock | None = None,
                      contract=None) -> tuple[Any, Any]:
    """Raise Verdict on any failure; return (ref_model, new_model) built at this size.

    The first seed runs the candidate before any reference call in this process; later seeds
    run it right after a reference call whose output memory was freed and poisoned. With
    `gpu`, everything from moving the models to the device on holds its lock shared.
    `contract`: the run's precision and tolerance (`workbench.problems.contract.Contract`;
    None: the default; the problem module is loaded at its precision by the caller).
    The candidate runs at the sizes `problem_mod` was loaded at: when the loader overrode size
    globals the candidate's file assigns too, its file is executed again with them
    (`candidate.at_sizes`), as the executor's worker imports it.
    """
    cand_mod = at_sizes(cand_mod, getattr(problem_mod, SIZES_ATTR, None))
    if matmul_like is None:
        matmul_like = correctness.is_matmul_like(str(getattr(problem_mod, "CATEGORY", "")),
                                                 tuple(getattr(problem_mod, "TAGS", ()) or ()))
    ref, new = _build(problem_mod, cand_mod, seeds[0], contract)
    with (gpu.shared() if gpu is not None else contextlib.nullcontext()):
        ref, new = ref.to(device).eval(), new.to(device).eval()
        for i, seed in enumerate(seeds):
            _check_seed(problem_mod, ref, new, device, seed, i == 0, reduced_k, label, matmul_like, contract)
    return ref, new


