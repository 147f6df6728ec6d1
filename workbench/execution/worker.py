"""One measurement job, run inside a chunk worker (chunked.py) on behalf of the executor, and
the clean reference worker that the judge runs the reference in.

The candidate's side (`run_job`): static guards -> the problem loaded at each shape -> the
candidate imported from a real file (Triton needs source), at each shape's size overrides where
they reach its own globals (candidate.py) -> ModelNew at each shape, with the reference's
weights read from the files the judge's preparation wrote (this process never builds or holds a reference) -> one
warm-up call per shape on inputs of its own (compiles, autotunes) -> "gate": the executor asks
the judge's timer (timer.py) for a session, and this process answers its calls through the
gate (gate.py) until the timer ends it. It returns no data: the timer draws the inputs, takes
the times and compares the outputs. `run_job` raises Verdict for what this process finds
wrong itself (which can only make its own candidate look worse).

The reference's side (`reference_main`, `python -m workbench.execution.worker --reference`):
the same gate, the problem's own Model as the module it runs, started by the timer and never
given candidate code.

GPU work takes the GPU's lock (gpu_lock.GpuLock) shared; the timer takes it exclusive for a
session: no other worker of the executor runs anything on the GPU while the timer times.
"""
from __future__ import annotations

import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any, Mapping

from workbench.execution import gate, guards
from workbench.execution.candidate import candidate_sizes, load_candidate
from workbench.execution.gpu_lock import GpuLock
from workbench.execution.job import WorkerJob
from workbench.execution.localcheck import Verdict, check_correctness, classify_error  # noqa: F401 (re-exported)
from workbench.execution.models import copy_state, make_inputs, perturbed_sizes  # noqa: F401 (re-exported)


_COMPILING_UNDER: GpuLock | None = None   # the job's lock, when its compiles step out of it
_TRITON_COMPILE: Any = None               # triton.compiler.compile as Triton shipped it


def _compile_stepping_out(*args: Any, **kwargs: Any) -> Any:
    """Stands in for triton.compiler.compile: on the main thread of a job measured with
    compile_unlocked, the compile runs stepped out of the job's shared hold, and the job steps
    back in (through the turnstile) when it returns or raises. Elsewhere it is Triton's compile
    unchanged."""
    gpu = _COMPILING_UNDER
    if gpu is None or threading.current_thread() is not threading.main_thread() or gpu.stepped_out:
        return _TRITON_COMPILE(*args, **kwargs)   # (already out: whoever stepped out steps back in)
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


def _import_candidate(source: str, workdir: Path, cid: str, overrides: Mapping[str, Any] | None = None,
                      tag: str = ""):
    """The candidate `source` as a module executed from a real file (Triton reads kernels from
    it), with the problem's size `overrides` applied to the size globals it assigns
    (`candidate.load_candidate`); `tag` names a second module of the same file (another
    shape). Raises Verdict("compile_error") when it fails to import or defines no ModelNew."""
    path = workdir / f"candidate_{cid}.py"
    if not path.is_file() or path.read_text() != source:
        path.write_text(source)
    try:
        module = load_candidate(source, path, f"wb_candidate_{cid}" + (f"__{tag}" if tag else ""), overrides)
    except SyntaxError as e:
        raise Verdict("compile_error", f"syntax error at line {e.lineno}: {e.msg}") from e
    except Exception as e:  # noqa: BLE001
        raise Verdict("compile_error", f"importing the candidate failed: {type(e).__name__}: {e}") from e
    if not hasattr(module, "ModelNew"):
        raise Verdict("compile_error", "the candidate defines no `ModelNew` class (KernelBench answer form)")
    return module


def import_at_shapes(source: str, workdir: Path, cid: str, shapes: dict[str, Any]) -> dict[str, Any]:
    """The candidate's module for each shape (`shapes`: name -> LoadedProblem), each with that
    shape's size overrides applied (`candidate.candidate_sizes`); shapes whose overrides reach
    the candidate alike share one module."""
    by_sizes: dict[str, Any] = {}
    out: dict[str, Any] = {}
    for name, lp in shapes.items():
        mine = candidate_sizes(source, lp.overrides)
        key = repr(sorted(mine.items()))
        if key not in by_sizes:
            by_sizes[key] = _import_candidate(source, workdir, cid, mine, tag="" if not by_sizes else name)
        out[name] = by_sizes[key]
    return out


def load_shape(problem: dict, spec: dict):
    """The problem module at one of the shapes the judge's preparation named
    (reference.ReferenceData), at the run's precision (Model and floating-point inputs cast:
    `workbench.problems.contract`)."""
    from workbench.problems import load_source

    return load_source(problem["source"], name=problem["id"], sizes=spec.get("sizes"), cpu=bool(spec.get("cpu")),
                       precision=str(spec.get("precision") or "native"))


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


_LABELS = {"full": "full size", "second": "second shape"}


def _build(job: WorkerJob, cand_mods: dict[str, Any], shapes: dict[str, Any], gpu: GpuLock) -> dict[str, Any]:
    """ModelNew at each shape (from that shape's module of the candidate), cast to the run's
    precision (`job.options.contract`, as the benchmark casts the model it is given) and given
    the reference's weights, on the device, after one warm-up call on inputs of its own
    (compiles and autotunes happen here, not in the judge's session)."""
    import torch

    from workbench.execution.tensorfile import read_state

    seed = int(job.options.seeds[0])
    contract = job.options.contract
    models: dict[str, Any] = {}
    for name, lp in shapes.items():
        torch.manual_seed(seed)
        try:
            new = cand_mods[name].ModelNew(*lp.get_init_inputs())
        except Exception as e:  # noqa: BLE001
            raise Verdict("runtime_error", f"ModelNew(*get_init_inputs()) failed: {type(e).__name__}: {e}") from e
        try:
            new = contract.cast_model(new)
        except Exception as e:  # noqa: BLE001
            raise Verdict("runtime_error", f"ModelNew.to({contract.precision}) failed: {type(e).__name__}: {e}") from e
        weights = job.prepared["weights"].get(name)
        if weights:
            copy_state(read_state(weights), new)
        models[name] = new
    with gpu.shared():
        for name, new in models.items():
            label = f"candidate ({_LABELS.get(name, name)}, warm-up)"
            try:
                new = new.to(job.device).eval()
                x = make_inputs(shapes[name].module, job.device)
                before = guards.RuntimeSnapshot()
                with torch.no_grad():
                    new(*x)
                _sync(job.device)
            except Exception as e:  # noqa: BLE001
                raise Verdict(*classify_error(e, label)) from e
            changes = guards.RuntimeSnapshot().changes_since(before)
            if changes:
                raise Verdict("cheat_suspected", "; ".join(changes))
            models[name] = new
    return models


def open_arena(info: dict, fds: list[int]):
    if info.get("kind") == "cuda":
        from workbench.execution.gate_cuda import open_device_arena

        return open_device_arena(info, fds)
    return gate.open_host_arena(info, fds)


def make_sync(info: dict):
    if info.get("kind") == "cuda":
        from workbench.execution.gate_cuda import CudaSync

        return CudaSync(info)
    return gate.HostSync()


def share_outputs():
    """How this process shares its outputs with the judge: by CUDA IPC on a GPU, else None
    (the CPU gate copies them into the arena)."""
    import torch

    if torch.cuda.is_available():
        from workbench.execution.gate_cuda import share_outputs as share

        return share
    return None


def run_job(job: WorkerJob, link: gate.Link | None, state: gate.WorkerState | None, on_phase=None,
            on_gate=None) -> dict:
    """Build and warm up one candidate, then answer the judge's session; returns {"status":
    "ok", "reason": "", "compile_s"} (never a verdict of ok: that is the judge's) or raises
    Verdict for what this process finds wrong itself. `on_phase(name)` is told when the job
    waits for the GPU and checks (gpu_lock phases); `on_gate()` when it is ready for the
    judge's session."""
    problem, cand, opts, device = job.problem, job.candidate, job.options, job.device
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
    # The problem at each shape, loaded before any candidate code runs: the size overrides its
    # module is executed with come from the problem file and the job alone.
    shapes = {name: load_shape(problem, spec) for name, spec in job.prepared["shapes"].items()}
    baseline = guards.RuntimeSnapshot()
    cand_mods = import_at_shapes(cand["source"], Path(job.workdir), cand["id"], shapes)
    changes = guards.RuntimeSnapshot().changes_since(baseline, threads=False)
    if changes:
        raise Verdict("cheat_suspected", "on import: " + "; ".join(changes))
    models = _build(job, cand_mods, shapes, gpu)
    result: dict[str, Any] = {"status": "ok", "reason": "", "compile_s": round(time.time() - t_start, 3)}
    if link is None or state is None:
        raise Verdict("crashed", "the worker has no link to the judge")
    before = guards.RuntimeSnapshot()
    if on_gate is not None:
        on_gate()

    def on_error(e: BaseException, slot: str) -> dict:
        status, reason = classify_error(e, f"candidate ({_LABELS.get(slot, slot)})")
        return {"ok": False, "status": status, "reason": reason}

    ended = gate.serve(link, models, device, state, on_error)
    changes = guards.RuntimeSnapshot().changes_since(before)
    if changes:
        raise Verdict("cheat_suspected", "during the judge's session: " + "; ".join(changes))
    if ended != "end":
        result.update(status=ended, reason="the judge's session ended on this candidate's error (see the judge's report)")
    return result


# --------------------------------------------------------------------------- the reference worker
def reference_main(link_fd: int) -> int:
    """The clean reference worker: the problem's own Model behind the gate (see module doc).

    Messages from the timer: "problem" (build the Model at each shape with the seed, one call
    on inputs of its own; reply the outputs' layout entries), "setup" / "resume" (an arena per
    problem key), "call" (slot "null": copy a stored output, the gate's own cost), "drop"."""
    import torch

    from workbench.execution import contain
    from workbench.execution.models import build_reference

    contain.protect_process()
    torch.backends.cudnn.allow_tf32 = False
    link = gate.Link.from_fd(link_fd)
    models: dict[str, dict[str, Any]] = {}
    arenas: dict[str, tuple[Any, dict]] = {}
    device = "cpu"
    sync = None
    share = share_outputs()
    kept: list = []
    link.send({"type": "ready"})
    while True:
        try:
            msg = link.recv(None)
        except gate.LinkClosed:
            return 0
        kind = msg.get("type")
        try:
            if kind == "problem":
                device = msg["device"]
                key = msg["key"]
                built, outs = {}, {}
                for name, spec in msg["shapes"].items():
                    lp = load_shape(msg["problem"], spec)
                    with torch.no_grad():
                        m = build_reference(lp.module, int(msg["seed"])).to(device).eval()
                        o = m(*make_inputs(lp.module, device))
                    _sync(device)
                    built[name] = m
                    outs[name] = gate.entries(o if isinstance(o, (list, tuple)) else [o], 0)[0]
                    if name == "full":
                        # The null call: the gate's own cost (on the CPU, where outputs are
                        # copied into the arena, a stored output copied like any other; on a
                        # GPU one tiny kernel, whose launch after the switch every call pays).
                        src = [t.clone() if isinstance(t, torch.Tensor) else t
                               for t in (o if isinstance(o, (list, tuple)) else [o])]
                        if device == "cpu":
                            built["null"] = lambda *_, src=src: src
                        else:     # one tiny kernel: the first launch after the gate's context switch
                            tiny = torch.zeros(1, device=device)
                            built["null"] = lambda *_, t=tiny: (t.add_(1.0), [])[1]
                models[key] = built
                link.send({"type": "problem-ok", "outputs": outs})
            elif kind in ("setup", "resume"):
                key = msg["key"]
                if kind == "setup":
                    if key in arenas:
                        raise RuntimeError(f"a second setup for {key}")
                    arenas[key] = (gate.open_setup(link, msg, open_arena), msg["layout"])
                    sync = sync or make_sync(msg.get("clock", {}))
                link.send({"type": "setup-ok"})
            elif kind == "call":
                key, slot = msg["key"], msg["slot"]
                base, layout = arenas[key]

                def on_error(e: BaseException) -> dict:
                    return {"ok": False, "status": "runtime_error",
                            "reason": f"the reference failed in the judge's clean worker: {type(e).__name__}: {e}"[:3000]}

                link.send(gate.answer_call(msg, models[key][slot], layout["slots"][slot], base, sync, device, on_error,
                                           share, kept, layout["slots"]))
            elif kind == "drop":
                key = msg["key"]
                kept.clear()
                models.pop(key, None)
                got = arenas.pop(key, None)
                if got is not None and device.startswith("cuda"):
                    from workbench.execution.gate_cuda import close_device_arena

                    close_device_arena(got[0])
                if device.startswith("cuda"):
                    torch.cuda.empty_cache()
                link.send({"type": "dropped", "key": key})
            elif kind == "end":
                continue
            else:
                link.send({"type": "out-of-turn", "got": str(kind)[:40]})
        except Exception as e:  # noqa: BLE001 - reported; the timer decides whether to restart this process
            link.send({"type": f"{kind}-failed", "error": f"{type(e).__name__}: {str(e)[:1500]}\n"
                                                          + traceback.format_exc()[-1500:]})


if __name__ == "__main__":
    if sys.argv[1:2] == ["--reference"]:
        sys.exit(reference_main(int(sys.argv[2])))
