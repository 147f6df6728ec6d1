"""One measurement, in a throw-away process: `python -m workbench.execution.worker JOB RESULT`.

JOB is a JSON file written by the sandbox (problem, candidate, device, options); RESULT is
where this process writes its verdict as JSON, atomically. Anything that kills this process
(segfault, os._exit, sticky CUDA error, OOM kill, timeout) is seen by the parent as a
missing RESULT and recorded there; nothing here needs to survive it.

Sequence: static guards -> import the candidate from a real file (Triton needs source) ->
build Model and ModelNew with the same seed and the reference's weights -> correctness on
several seeds (candidate before and after the reference, inputs checked for mutation,
outputs checked for aliasing, subclassing and degeneracy) and at a second shape -> timing
of reference and candidate, interleaved -> roofline check.

GPU work takes the GPU's lock (gpu_lock.GpuLock) shared, timing takes it exclusive: no
other worker of the executor runs anything on the GPU during a timed region, while imports,
CUDA C++ builds and correctness checks of many workers overlap.
"""
from __future__ import annotations

import contextlib
import importlib.util
import json
import math
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from workbench.execution import correctness, guards
from workbench.execution.gpu_lock import GpuLock, write_phase
from workbench.problems import load_source


class Verdict(Exception):
    """Ends the job with a status (the worker's only way to report a non-ok result)."""

    def __init__(self, status: str, reason: str):
        super().__init__(reason)
        self.status, self.reason = status, reason


def _import_candidate(source: str, workdir: Path, cid: str):
    path = workdir / f"candidate_{cid}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"wb_candidate_{cid}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        raise Verdict("compile_error", f"syntax error at line {e.lineno}: {e.msg}") from e
    except Exception as e:  # noqa: BLE001
        raise Verdict("compile_error", f"importing the candidate failed: {type(e).__name__}: {e}") from e
    if not hasattr(module, "ModelNew"):
        raise Verdict("compile_error", "the candidate defines no `ModelNew` class (KernelBench answer form)")
    return module


def _to(x, device):
    import torch

    if isinstance(x, torch.Tensor):
        return x.to(device)
    if isinstance(x, (list, tuple)):
        return type(x)(_to(v, device) for v in x)
    return x


def _inputs(problem_mod, device):
    """`get_inputs()` created directly on `device` (random inputs of a large problem take
    seconds to draw on the CPU), then moved there for any tensor made elsewhere."""
    import torch

    with torch.device(device):
        return _to(problem_mod.get_inputs(), device)


def _clone(x):
    import torch

    if isinstance(x, torch.Tensor):
        return x.clone()
    if isinstance(x, (list, tuple)):
        return type(x)(_clone(v) for v in x)
    return x


def _build(problem_mod, cand_mod, seed: int):
    """Model and ModelNew with the same seed and the reference's weights, not yet moved to a
    device (a CUDA C++ candidate may build its extension here: host work, outside the lock)."""
    import torch

    init = problem_mod.get_init_inputs()
    torch.manual_seed(seed)
    ref = problem_mod.Model(*init)
    torch.manual_seed(seed)
    try:
        new = cand_mod.ModelNew(*init)
    except Exception as e:  # noqa: BLE001
        raise Verdict("runtime_error", f"ModelNew(*get_init_inputs()) failed: {type(e).__name__}: {e}") from e
    copy_state(ref, new)
    return ref, new


def copy_state(ref, new) -> bool:
    """Give ModelNew the reference's weights, by name.

    When both modules have the same parameter and buffer names, each of ModelNew's tensors is
    replaced by a copy of the reference's (shapes included: a candidate may create placeholders
    when its __init__ cannot know the problem's sizes). Returns whether anything was copied.
    """
    import torch

    rs, ns = ref.state_dict(), new.state_dict()
    if not rs or set(rs) != set(ns):
        return False
    for name, value in rs.items():
        owner_path, _, attr = name.rpartition(".")
        owner = new.get_submodule(owner_path) if owner_path else new
        if attr in owner._parameters:
            owner._parameters[attr] = torch.nn.Parameter(value.detach().clone(), requires_grad=False)
        else:
            owner._buffers[attr] = value.detach().clone()
    return True


def _sync(device):
    import torch

    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def _run(model, inputs, device, what: str):
    import torch

    try:
        with torch.no_grad():
            out = model(*inputs)
        _sync(device)
        return out
    except Exception as e:  # noqa: BLE001
        name = type(e).__name__
        if "CompilationError" in name or "CompileError" in name:
            raise Verdict("compile_error", f"{what}: {name}: {str(e)[:2000]}") from e
        if isinstance(e, torch.cuda.OutOfMemoryError) or "out of memory" in str(e):
            raise Verdict("runtime_error", f"{what}: out of GPU memory: {str(e)[:500]}") from e
        if "ninja" in str(e).lower() or "Error building extension" in str(e):
            raise Verdict("compile_error", f"{what}: {name}: {str(e)[-3000:]}") from e
        raise Verdict("runtime_error", f"{what}: {name}: {str(e)[:2000]}") from e


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
                matmul_like: bool) -> None:
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
    ok, why = correctness.compare_outputs(out, ref_out, reduced_k, matmul_like)
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
        ok, why = correctness.compare_outputs(again, ref_again, reduced_k, matmul_like)
        if not ok:
            if correctness.same_tensors(again, stale):
                raise Verdict("cheat_suspected", f"{label}, call with {what}: returned the previous "
                              "call's result (results cached across calls)")
            raise Verdict("incorrect", f"{label}, call with {what}: {why} (state kept between calls?)")


def check_correctness(problem_mod, cand_mod, device, seeds, reduced_k: int, label: str,
                      matmul_like: bool | None = None, gpu: GpuLock | None = None) -> tuple[Any, Any]:
    """Raise Verdict on any failure; return (ref_model, new_model) built at this size.

    The first seed runs the candidate before any reference call in this process; later seeds
    run it right after a reference call whose output memory was freed and poisoned. With
    `gpu`, everything from moving the models to the device on holds its lock shared.
    """
    if matmul_like is None:
        matmul_like = correctness.is_matmul_like(str(getattr(problem_mod, "CATEGORY", "")),
                                                 tuple(getattr(problem_mod, "TAGS", ()) or ()))
    ref, new = _build(problem_mod, cand_mod, seeds[0])
    with (gpu.shared() if gpu is not None else contextlib.nullcontext()):
        ref, new = ref.to(device).eval(), new.to(device).eval()
        for i, seed in enumerate(seeds):
            _check_seed(problem_mod, ref, new, device, seed, i == 0, reduced_k, label, matmul_like)
    return ref, new


def perturbed_sizes(sizes: dict[str, Any]) -> dict[str, int]:
    """A second shape near `sizes`: integer sizes >= 8 that are not powers of two grow by
    about a third (powers of two and small sizes are often structural: head dim, patch)."""
    out = {}
    for k, v in sizes.items():
        if isinstance(v, int) and not isinstance(v, bool) and v >= 8 and v & (v - 1):
            out[k] = v + max(2, v // 3)
    return out


def _second_shape(problem: dict, device: str):
    """The problem module at a second shape, or None when there is none the reference accepts."""
    import torch

    if device != "cpu":
        small = load_source(problem["source"], name=problem["id"], cpu=True)
        base = load_source(problem["source"], name=problem["id"])
        return small if small.sizes != base.sizes else None
    cpu_sizes = load_source(problem["source"], name=problem["id"], cpu=True)
    cpu_keys = getattr(cpu_sizes.module, "CPU_SIZES", {}) or {}
    bumped = perturbed_sizes({k: cpu_sizes.sizes[k] for k in cpu_keys if k in cpu_sizes.sizes})
    if not bumped:
        return None
    try:
        other = load_source(problem["source"], name=problem["id"], sizes=bumped, cpu=True)
        torch.manual_seed(0)
        with torch.no_grad():
            other.Model(*other.get_init_inputs())(*other.get_inputs())
    except Exception:  # noqa: BLE001 - the reference does not support that shape: no second shape
        return None
    return other


def run_job(job: dict) -> dict:
    problem = job["problem"]
    cand = job["candidate"]
    device = job.get("device", "cuda")
    workdir = Path(job["workdir"])
    result: dict[str, Any] = {"status": "ok", "reason": ""}
    t_start = time.time()

    findings = guards.static_findings(cand["source"], problem["source"])
    if findings:
        raise Verdict("cheat_suspected", "; ".join(findings))

    import torch

    gpu = GpuLock(job.get("lock_path") if device.startswith("cuda") else None,
                  on_phase=lambda name: _phase(workdir, name))
    if device.startswith("cuda"):
        frac = float(job.get("gpu_memory_fraction", 0.0))
        if frac > 0:
            torch.cuda.set_per_process_memory_fraction(frac)
    baseline = guards.RuntimeSnapshot()
    cand_mod = _import_candidate(cand["source"], workdir, cand["id"])
    changes = guards.RuntimeSnapshot().changes_since(baseline, threads=False)
    if changes:
        raise Verdict("cheat_suspected", "on import: " + "; ".join(changes))

    full = load_source(problem["source"], name=problem["id"], cpu=(device == "cpu"))
    seeds = list(job.get("seeds", [0, 1, 2]))
    reduced_k = int(max(full.sizes.values(), default=1)) if full.sizes else 1
    ref, new = check_correctness(full.module, cand_mod, device, seeds, reduced_k, "full size", gpu=gpu)
    if job.get("second_shape", True):
        other = _second_shape(problem, device)
        if other is not None:
            check_correctness(other.module, cand_mod, device, seeds[:1],
                              int(max(other.sizes.values(), default=1)), "second shape", gpu=gpu)
    result["compile_s"] = round(time.time() - t_start, 3)

    if not job.get("time", True):
        return result
    with gpu.shared():
        input_sets = []
        for k in range(int(job.get("input_sets", 3))):
            torch.manual_seed(9000 + k)
            input_sets.append(_inputs(full.module, device))

    def call(model):
        def fn(inputs):
            with torch.no_grad():
                return model(*inputs)
        return fn

    before = guards.RuntimeSnapshot()
    repeats = []
    for _ in range(max(1, int(job.get("timing_repeats", 1)))):
        ref_stats, cand_stats = _time_pair(call(ref), call(new), input_sets, device, job, gpu)
        repeats.append((ref_stats, cand_stats))
    ref_stats, cand_stats = repeats[0]
    changes = guards.RuntimeSnapshot().changes_since(before)
    if changes:
        raise Verdict("cheat_suspected", "during timing: " + "; ".join(changes))
    if not (cand_stats.median_ms > 0 and math.isfinite(cand_stats.median_ms)):
        raise Verdict("cheat_suspected", f"candidate time {cand_stats.median_ms!r} ms: the timer did not "
                      "measure the candidate's work")
    result.update({
        "reference": ref_stats.to_dict(), "candidate": cand_stats.to_dict(),
        "speedup": ref_stats.median_ms / cand_stats.median_ms,
    })
    if len(repeats) > 1:
        result["repeats"] = [{"reference": r.to_dict(), "candidate": c.to_dict()} for r, c in repeats]
    floor = job.get("roofline_floor_ms")
    why = guards.roofline_finding(cand_stats.median_ms, floor)
    if why:
        raise Verdict("cheat_suspected", why)
    return result


def _time_pair(ref_fn, cand_fn, input_sets, device: str, job: dict, gpu: GpuLock):
    """One timing of reference and candidate (interleaved), holding the GPU exclusively.

    On a GPU the main thread moves to the CPU core kept free for timing (`timing_cpus`) for
    the timed region only, and back afterwards: a chunk worker goes on compiling after it.
    """
    if not device.startswith("cuda"):
        from workbench.execution.timing import time_cpu_pair

        with gpu.exclusive():
            return time_cpu_pair(ref_fn, cand_fn, input_sets, **job.get("cpu_timing", {}))
    import torch

    from workbench.execution.timing import L2Flusher, time_cuda_pair

    flush = L2Flusher(torch.device(device))
    cpus = job.get("timing_cpus") if hasattr(os, "sched_setaffinity") else None
    with gpu.exclusive():
        saved = os.sched_getaffinity(0) if cpus else None
        if cpus:
            os.sched_setaffinity(0, cpus)
        try:
            return time_cuda_pair(ref_fn, cand_fn, input_sets, flush=flush, **job.get("timing", {}))
        finally:
            if saved:
                os.sched_setaffinity(0, saved)


def _phase(workdir: Path, name: str) -> None:
    """Tell the parent which budget applies now (see sandbox.PhaseBudget)."""
    write_phase(workdir, name)


def main(argv: list[str]) -> int:
    job_path, result_path = Path(argv[0]), Path(argv[1])
    job = json.loads(job_path.read_text())
    try:
        result = run_job(job)
    except Verdict as v:
        result = {"status": v.status, "reason": v.reason}
    except SystemExit as e:
        result = {"status": "crashed", "reason": f"the candidate called exit({e.code})"}
    except MemoryError:
        result = {"status": "runtime_error", "reason": "out of host memory"}
    except BaseException as e:  # noqa: BLE001 - any failure of user code is a status
        result = {"status": "runtime_error", "reason": f"{type(e).__name__}: {str(e)[:2000]}",
                  "traceback": traceback.format_exc()[-4000:]}
    tmp = result_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(result))
    os.replace(tmp, result_path)
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: a candidate's atexit hooks or a broken CUDA context must not
    # change the verdict already written.
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
