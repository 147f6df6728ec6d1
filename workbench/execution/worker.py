"""One measurement job, run inside a chunk worker (chunked.py) on behalf of the executor.

The job arrives over the worker's job channel; `run_job` returns raw data (the candidate's
outputs at each check point and at randomly kept timed runs, written to the job's output
directory, and its timing samples) or raises Verdict for what this process finds wrong
itself. The verdict of ok is the executor's (verdict.judge), never this process's: the
candidate's code runs here and could patch anything in it.

Sequence: static guards -> import the candidate from a real file (Triton needs source) ->
build Model and ModelNew with the same seed and the reference's weights -> correctness on
several seeds (candidate before and after the reference, inputs checked for mutation,
outputs checked for aliasing, subclassing and degeneracy) and at a second shape -> timing
of reference and candidate, interleaved.

GPU work takes the GPU's lock (gpu_lock.GpuLock) shared, timing takes it exclusive: no
other worker of the executor runs anything on the GPU during a timed region, while imports,
CUDA C++ builds and correctness checks of many workers overlap.
"""
from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from workbench.execution import correctness, guards
from workbench.execution.gpu_lock import GpuLock
from workbench.execution.job import MeasureOptions, WorkerJob
from workbench.problems import load_source


class Verdict(Exception):
    """Ends the job with a status (the worker's only way to report a non-ok result)."""

    def __init__(self, status: str, reason: str):
        super().__init__(reason)
        self.status, self.reason = status, reason


_COMPILING_UNDER: GpuLock | None = None   # the job's lock, when its compiles step out of it
_TRITON_COMPILE: Any = None               # triton.compiler.compile as Triton shipped it


def _compile_stepping_out(*args: Any, **kwargs: Any) -> Any:
    """Stands in for triton.compiler.compile: on the main thread of a job measured with
    compile_unlocked, the compile runs stepped out of the job's shared hold, and the job steps
    back in (through the turnstile) when it returns or raises. Elsewhere it is Triton's compile
    unchanged."""
    gpu = _COMPILING_UNDER
    if gpu is None or threading.current_thread() is not threading.main_thread():
        return _TRITON_COMPILE(*args, **kwargs)
    gpu.step_out()
    try:
        return _TRITON_COMPILE(*args, **kwargs)
    finally:
        gpu.step_in()


def compile_outside_lock(gpu: GpuLock | None) -> None:
    """Make this process's Triton compiles step out of `gpu`'s shared hold and back in when they
    return or raise (None: stop doing so).

    A @triton.jit kernel reads `triton.compiler.compile` when it first runs on a device, so the
    stand-in is installed on that name once for the life of the process (before any candidate is
    imported) and consults the current job's lock on each call. Only the main thread steps out
    (Triton's async compile mode compiles on pool threads while the main thread may launch GPU
    work). GPU work a candidate runs on its own threads while its main thread compiles is not held
    back by the lock: the option is for throughput on trusted pools, and the default keeps every
    compile inside the hold."""
    global _COMPILING_UNDER, _TRITON_COMPILE
    if gpu is not None and _TRITON_COMPILE is None:
        import triton.compiler

        _TRITON_COMPILE = triton.compiler.compile
        triton.compiler.compile = _compile_stepping_out
    _COMPILING_UNDER = gpu


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
                matmul_like: bool, ship=None, contract=None) -> None:
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
    if ship is not None:
        ship(f"{label}:seed{seed}", out)
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
        if ship is not None and what == "fresh inputs" and first and label == "full size":
            ship(f"{label}:fresh{seed}", again)
        ref_again = _run(ref, nxt, device, "reference")
        ok, why = correctness.compare_outputs(again, ref_again, reduced_k, matmul_like, contract)
        if not ok:
            if correctness.same_tensors(again, stale):
                raise Verdict("cheat_suspected", f"{label}, call with {what}: returned the previous "
                              "call's result (results cached across calls)")
            raise Verdict("incorrect", f"{label}, call with {what}: {why} (state kept between calls?)")


def check_correctness(problem_mod, cand_mod, device, seeds, reduced_k: int, label: str,
                      matmul_like: bool | None = None, gpu: GpuLock | None = None, ship=None,
                      contract=None) -> tuple[Any, Any]:
    """Raise Verdict on any failure; return (ref_model, new_model) built at this size.

    The first seed runs the candidate before any reference call in this process; later seeds
    run it right after a reference call whose output memory was freed and poisoned. With
    `gpu`, everything from moving the models to the device on holds its lock shared.
    `ship(point, output)` receives the candidate's output of each seed's first call (point
    "<label>:seed<s>") and of the first seed's call on fresh inputs ("<label>:fresh<s>") for
    the executor's own comparison, before this process compares anything. `contract`: the
    run's precision and tolerance (`workbench.problems.contract.Contract`; None: the default).
    """
    if matmul_like is None:
        matmul_like = correctness.is_matmul_like(str(getattr(problem_mod, "CATEGORY", "")),
                                                 tuple(getattr(problem_mod, "TAGS", ()) or ()))
    ref, new = _build(problem_mod, cand_mod, seeds[0], contract)
    with (gpu.shared() if gpu is not None else contextlib.nullcontext()):
        ref, new = ref.to(device).eval(), new.to(device).eval()
        for i, seed in enumerate(seeds):
            _check_seed(problem_mod, ref, new, device, seed, i == 0, reduced_k, label, matmul_like, ship, contract)
    return ref, new


def perturbed_sizes(sizes: dict[str, Any]) -> dict[str, int]:
    """A second shape near `sizes`: integer sizes >= 8 that are not powers of two grow by
    about a third (powers of two and small sizes are often structural: head dim, patch)."""
    out = {}
    for k, v in sizes.items():
        if isinstance(v, int) and not isinstance(v, bool) and v >= 8 and v & (v - 1):
            out[k] = v + max(2, v // 3)
    return out


def _second_shape(problem: dict, device: str, precision: str = "native"):
    """The problem module at a second shape (at `precision`), or None when there is none the
    reference accepts."""
    import torch

    if device != "cpu":
        small = load_source(problem["source"], name=problem["id"], cpu=True, precision=precision)
        base = load_source(problem["source"], name=problem["id"])
        return small if small.sizes != base.sizes else None
    cpu_sizes = load_source(problem["source"], name=problem["id"], cpu=True)
    cpu_keys = getattr(cpu_sizes.module, "CPU_SIZES", {}) or {}
    bumped = perturbed_sizes({k: cpu_sizes.sizes[k] for k in cpu_keys if k in cpu_sizes.sizes})
    if not bumped:
        return None
    try:
        other = load_source(problem["source"], name=problem["id"], sizes=bumped, cpu=True, precision=precision)
        torch.manual_seed(0)
        with torch.no_grad():
            other.Model(*other.get_init_inputs())(*other.get_inputs())
    except Exception:  # noqa: BLE001 - the reference does not support that shape: no second shape
        return None
    return other


class _Shipper:
    """Writes the candidate's outputs at check and timing points to the job's output
    directory (see tensorfile) and remembers their metadata for the result message.

    Which points are shipped follows `tensorfile.ships` (the clean reference writes the same
    points): the first seed's, the second shape's and the timed runs' always; the other seeds'
    and fresh inputs' only for outputs of at most tensorfile.EXTRA_POINT_MAX_BYTES."""

    def __init__(self, directory: str | None):
        self.directory = directory
        self.points: dict[str, list[dict]] = {}
        self.first_bytes = 0

    def __call__(self, point: str, out) -> None:
        from workbench.execution import tensorfile

        size = tensorfile.nbytes(out)
        first = not self.points
        if first:
            self.first_bytes = size
        if self.directory is None or not tensorfile.ships(point, size, first):
            return
        self.points[point] = tensorfile.write_outputs(self.directory, point, out)


class _TimedSampler:
    """Keeps copies of `k` of the candidate's timed outputs, chosen uniformly among all its
    timed calls (reservoir sampling) with the operating system's random source: the candidate
    cannot tell a kept call from another. Copies are taken after the sample's end event."""

    def __init__(self, k: int):
        import random

        self.k, self.seen = k, 0
        self.kept: list[tuple[int, Any]] = []
        self._rng = random.SystemRandom()
        self.last: tuple[int, Any] | None = None

    def after_call(self) -> None:
        if self.last is None:
            return
        self.seen += 1
        idx, out = self.last
        self.last = None
        if len(self.kept) < self.k:
            self.kept.append((idx, _clone(out)))
        else:
            j = self._rng.randrange(self.seen)
            if j < self.k:
                self.kept[j] = (idx, _clone(out))


def run_job(job: WorkerJob, on_phase=None) -> dict:
    """Check and time one candidate; return its raw data (never a verdict of ok).

    Raises Verdict for what this process finds wrong itself. Otherwise returns {"status": "ok",
    "compile_s", "points": {point: output metadata}, "samples": [{"reference": [ms...],
    "candidate": [ms...]}, ...]}: the executor compares the shipped outputs with a clean
    reference process's and computes the times from the samples. `on_phase(name)` is told when
    the job waits for the GPU, checks and times (gpu_lock phases).
    """
    problem = job.problem
    cand = job.candidate
    opts = job.options
    device = job.device
    workdir = Path(job.workdir)
    ship = _Shipper(job.out_dir)
    result: dict[str, Any] = {"status": "ok", "reason": ""}
    t_start = time.time()

    findings = guards.static_findings(cand["source"], problem["source"])
    if findings:
        raise Verdict("cheat_suspected", "; ".join(findings))

    import torch

    gpu = GpuLock(job.lock_path if device.startswith("cuda") else None, on_phase=on_phase)
    if device.startswith("cuda"):
        compile_outside_lock(gpu if opts.compile_unlocked else None)
        frac = float(opts.gpu_memory_fraction)
        if frac > 0:
            torch.cuda.set_per_process_memory_fraction(frac)
    baseline = guards.RuntimeSnapshot()
    cand_mod = _import_candidate(cand["source"], workdir, cand["id"])
    changes = guards.RuntimeSnapshot().changes_since(baseline, threads=False)
    if changes:
        raise Verdict("cheat_suspected", "on import: " + "; ".join(changes))

    contract = opts.contract
    full = load_source(problem["source"], name=problem["id"], cpu=(device == "cpu"), precision=contract.precision)
    seeds = list(opts.seeds)
    reduced_k = int(max(full.sizes.values(), default=1)) if full.sizes else 1
    ref, new = check_correctness(full.module, cand_mod, device, seeds, reduced_k, "full size", gpu=gpu, ship=ship,
                                 contract=contract)
    if opts.second_shape:
        other = _second_shape(problem, device, contract.precision)
        if other is not None:
            check_correctness(other.module, cand_mod, device, seeds[:1], int(max(other.sizes.values(), default=1)),
                              "second shape", gpu=gpu, ship=ship, contract=contract)
    result["compile_s"] = round(time.time() - t_start, 3)
    result["points"] = ship.points

    if not opts.time:
        return result
    with gpu.shared():
        input_sets = []
        for k in range(int(opts.input_sets)):
            torch.manual_seed(9000 + k)
            input_sets.append(_inputs(full.module, device))
    sampler = _TimedSampler(3 if ship.first_bytes < 64 * 2**20 else 2)
    set_index = {id(s): k for k, s in enumerate(input_sets)}

    def call(model, keep: bool):
        def fn(inputs):
            with torch.no_grad():
                out = model(*inputs)
            if keep:
                sampler.last = (set_index[id(inputs)], out)
            return out
        return fn

    before = guards.RuntimeSnapshot()
    repeats = []
    for _ in range(max(1, int(opts.timing_repeats))):
        ref_ms, cand_ms = _time_pair(call(ref, False), call(new, True), input_sets, device, opts, gpu, sampler)
        repeats.append({"reference": ref_ms, "candidate": cand_ms})
    changes = guards.RuntimeSnapshot().changes_since(before)
    if changes:
        raise Verdict("cheat_suspected", "during timing: " + "; ".join(changes))
    for i, (k, out) in enumerate(sampler.kept):
        ship(f"timed:{i}:set{k}", out)
    result["points"] = ship.points
    result["samples"] = repeats
    return result


def _time_pair(ref_fn, cand_fn, input_sets, device: str, opts: MeasureOptions, gpu: GpuLock,
               sampler: _TimedSampler):
    """Samples (ms) of reference and candidate, interleaved, holding the GPU exclusively;
    `sampler` copies candidate outputs between samples, outside the timed region.

    On a GPU the main thread moves to the CPU core kept free for timing (`timing_cpus`) for
    the timed region only, and back afterwards: a chunk worker goes on compiling after it.
    """
    from workbench.execution import timing

    if not device.startswith("cuda"):
        def timer(fn, inputs):
            ms = timing.wall_timer(fn, inputs)
            sampler.after_call()
            return ms

        opts = {"warmup": 1, "min_runs": 3, "max_runs": 20, "max_total_ms": 2000.0, **opts.cpu_timing}
        with gpu.exclusive(), timing.no_gc():
            return timing.interleaved_samples([ref_fn, cand_fn], input_sets, timer, **opts)
    import torch

    flush = timing.L2Flusher(torch.device(device))
    cpus = opts.timing_cpus if hasattr(os, "sched_setaffinity") else None
    with gpu.exclusive():
        saved = os.sched_getaffinity(0) if cpus else None
        if cpus:
            os.sched_setaffinity(0, cpus)
        try:
            torch.cuda.synchronize()
            events = timing.CudaEventTimer(flush)

            def timer(fn, inputs):
                ms = events(fn, inputs)
                sampler.after_call()
                return ms

            with timing.no_gc():
                return timing.interleaved_samples([ref_fn, cand_fn], input_sets, timer,
                                                  **{**timing.CUDA_DEFAULTS, **opts.timing})
        finally:
            if saved:
                os.sched_setaffinity(0, saved)
