"""One measurement, in a throw-away process: `python -m workbench.execution.worker JOB RESULT`.

JOB is a JSON file written by the sandbox (problem, candidate, device, options); RESULT is
where this process writes its verdict as JSON, atomically. Anything that kills this process
(segfault, os._exit, sticky CUDA error, OOM kill, timeout) is seen by the parent as a
missing RESULT and recorded there; nothing here needs to survive it.

Sequence: static guards -> import the candidate from a real file (Triton needs source) ->
build Model and ModelNew with the same seed and the reference's weights -> correctness on
several seeds (candidate before and after the reference, inputs checked for mutation,
outputs checked for aliasing, subclassing and degeneracy) and at a second shape -> timing
of reference and candidate under the per-GPU lock -> roofline check.
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


def _clone(x):
    import torch

    if isinstance(x, torch.Tensor):
        return x.clone()
    if isinstance(x, (list, tuple)):
        return type(x)(_clone(v) for v in x)
    return x


def _build(problem_mod, cand_mod, device, seed: int):
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
    return ref.to(device).eval(), new.to(device).eval()


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
    """Allocate and free a NaN block of the output's size so a kernel that leaves elements
    unwritten returns NaN garbage from the caching allocator instead of lucky zeros."""
    import torch

    for t in (like if isinstance(like, (tuple, list)) else [like]):
        if isinstance(t, torch.Tensor) and t.is_floating_point():
            blk = torch.full_like(t, float("nan"))
            del blk


def check_correctness(problem_mod, cand_mod, device, seeds, reduced_k: int, label: str) -> tuple[Any, Any]:
    """Raise Verdict on any failure; return (ref_model, new_model) built at this size."""
    ref, new = _build(problem_mod, cand_mod, device, seeds[0])
    for i, seed in enumerate(seeds):
        import torch

        torch.manual_seed(1000 + seed)
        inputs = _to(problem_mod.get_inputs(), device)
        pristine = _clone(inputs)
        before = guards.RuntimeSnapshot()
        if i == 0:
            ref_probe = _run(ref, _clone(inputs), device, "reference")
            _poison(device, ref_probe)
            del ref_probe
        out_first = _run(new, inputs, device, f"candidate ({label}, seed {seed})")
        changes = guards.RuntimeSnapshot().changes_since(before)
        if changes:
            raise Verdict("cheat_suspected", "; ".join(changes))
        if not correctness.same_tensors(inputs, pristine):
            raise Verdict("cheat_suspected", "the candidate modified its inputs in place")
        ref_out = _run(ref, _clone(pristine), device, "reference")
        found = guards.output_findings(out_first, inputs, correctness._flatten(ref_out))
        if found:
            raise Verdict("cheat_suspected", "; ".join(found))
        ok, why = correctness.compare_outputs(out_first, ref_out, reduced_k)
        if not ok:
            deg = guards.degenerate_finding(out_first, ref_out)
            raise Verdict("cheat_suspected" if deg else "incorrect",
                          (deg + "; " if deg else "") + f"{label}, seed {seed}: {why}")
        # Candidate again after the reference, on fresh inputs: catches stale or cached results.
        torch.manual_seed(5000 + seed)
        inputs2 = _to(problem_mod.get_inputs(), device)
        out_again = _run(new, _clone(inputs2), device, f"candidate ({label}, second call)")
        ref_again = _run(ref, inputs2, device, "reference")
        ok, why = correctness.compare_outputs(out_again, ref_again, reduced_k)
        if not ok:
            raise Verdict("incorrect", f"{label}, second call on new inputs: {why} "
                          "(results cached across calls, or state kept between calls)")
    return ref, new


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

    if device.startswith("cuda"):
        frac = float(job.get("gpu_memory_fraction", 0.0))
        if frac > 0:
            torch.cuda.set_per_process_memory_fraction(frac)
    cand_mod = _import_candidate(cand["source"], workdir, cand["id"])

    full = load_source(problem["source"], name=problem["id"], cpu=(device == "cpu"))
    seeds = list(job.get("seeds", [0, 1, 2]))
    reduced_k = int(max(full.sizes.values(), default=1)) if full.sizes else 1
    ref, new = check_correctness(full.module, cand_mod, device, seeds, reduced_k, "full size")
    if device != "cpu" and job.get("second_shape", True):
        small = load_source(problem["source"], name=problem["id"], cpu=True)
        if small.sizes and small.sizes != full.sizes:
            check_correctness(small.module, cand_mod, device, seeds[:1],
                              int(max(small.sizes.values(), default=1)), "second shape")
    result["compile_s"] = round(time.time() - t_start, 3)

    if not job.get("time", True):
        return result
    torch.manual_seed(7)
    n_sets = int(job.get("input_sets", 3))
    input_sets = []
    for k in range(n_sets):
        torch.manual_seed(9000 + k)
        input_sets.append(_to(full.module.get_inputs(), device))

    def call(model):
        def fn(inputs):
            with torch.no_grad():
                return model(*inputs)
        return fn

    before = guards.RuntimeSnapshot()
    if device.startswith("cuda"):
        from workbench.execution.timing import L2Flusher, time_cuda

        flush = L2Flusher(torch.device(device))
        opts = job.get("timing", {})
        with _gpu_lock(job.get("lock_path")):
            ref_stats = time_cuda(call(ref), input_sets, flush=flush, **opts)
            cand_stats = time_cuda(call(new), input_sets, flush=flush, **opts)
    else:
        from workbench.execution.timing import time_cpu

        ref_stats = time_cpu(call(ref), input_sets)
        cand_stats = time_cpu(call(new), input_sets)
    changes = guards.RuntimeSnapshot().changes_since(before)
    if changes:
        raise Verdict("cheat_suspected", "during timing: " + "; ".join(changes))
    result.update({
        "reference": ref_stats.to_dict(), "candidate": cand_stats.to_dict(),
        "speedup": ref_stats.median_ms / cand_stats.median_ms if cand_stats.median_ms > 0 else math.inf,
    })
    floor = job.get("roofline_floor_ms")
    why = guards.roofline_finding(cand_stats.median_ms, floor)
    if why:
        raise Verdict("cheat_suspected", why)
    return result


@contextlib.contextmanager
def _gpu_lock(path: str | None):
    """Serialise timing on one GPU across worker processes (compilation stays parallel)."""
    if not path:
        yield
        return
    import fcntl

    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


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
