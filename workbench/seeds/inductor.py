"""Seeds from PyTorch Inductor: torch.compile's generated Triton for a problem's reference,
rewritten into a self-contained KernelBench answer (`ModelNew`).

Two halves:

- `capture(problem)` (needs a CUDA GPU) compiles the reference with `torch.compile` (default
  mode, dynamic shapes, duck sizing off, parameter shapes dynamic too, so the generated code
  reads every size from its arguments and runs at any size the problem is checked at),
  records Inductor's output code (one module with a `call(args)` entry, its Triton kernels and
  any library calls), what each `call` argument is (a parameter, a buffer, an input or a size
  of one), the launch configuration Inductor's autotuner picked for each kernel, and which of
  `call`'s results is which output of the reference. It runs the reference's own code (the
  problem, never a candidate) in the calling process: use `python -m workbench.seeds.inductor`
  (a subprocess) from anything that must not hold a CUDA context.
- `rewrite(...)` (`inductor_rewrite.py`, pure text, runs anywhere) turns that into a candidate
  file.

    python -m workbench.seeds.inductor PROBLEMS_JSONL OUT_JSONL [--baselines] [--gpu-lock PATH]

reads one `Problem.to_dict()` per line and writes one result per line as it goes (keys:
problem_id, ok, error, source, max_rel_err (full size), max_rel_err_small (CPU sizes),
compile_s, wall_s (the seed's capture, rewrite and validation) and, with --baselines,
`baseline`: eager_ms / compiled_ms / compile_speedup of torch.compile in default mode with
static shapes, no CUDA graphs, timed in this process). With --gpu-lock the GPU work shares the
executor's lock and the timing holds it alone, while Dynamo's tracing, Inductor's compile and
Triton's compiles (CPU work) hold none of it.

A CUDA error such as an illegal instruction or address is sticky: every later CUDA call of the
process fails with it. After a problem that leaves one (`context_lost`), the row of that problem
is written and the process exits with `EXIT_CONTEXT_LOST`, so that the caller starts a fresh
process for the problems after it instead of recording the same error for each of them.
"""
from __future__ import annotations

import argparse
import ast
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from workbench.records import Problem
from workbench.seeds.inductor_rewrite import RewriteError, _forward_signature, rewrite

__all__ = ["RewriteError", "capture", "rewrite", "seed_for", "seed_on_gpu", "validate", "baseline"]

#: Largest difference from the reference (relative to the output's scale) a validated seed may show.
VALIDATE_TOL = 1e-3

#: `main`'s exit status after a problem that left the process's CUDA context unusable (its row is
#: written; the problems after it were not attempted).
EXIT_CONTEXT_LOST = 75


def _runs_inside(compiled: Any, lock: Any) -> Any:
    """`compiled` (a graph compiled by Inductor) made to step back into `lock`'s shared hold
    before it runs: a compile started after `lock.step_out()` (Dynamo's tracing and Inductor's
    code generation are work of the CPU alone) keeps the GPU's lock free for the timers, and the
    generated code's launches are GPU work that must never overlap a timed region."""
    if lock is None:
        return compiled

    def run(*args, **kwargs):
        lock.step_in()
        return compiled(*args, **kwargs)

    if getattr(compiled, "_boxed_call", False):   # Inductor's calling convention: one list
        run._boxed_call = True  # type: ignore[attr-defined]
    return run


def _compiling_outside(fn: Any, lock: Any, *args: Any) -> Any:
    """fn(*args), the first call of a torch.compile'd function whose backend uses `_runs_inside`:
    stepped out of `lock`'s shared hold until the compiled code runs, and back in after."""
    if lock is None:
        return fn(*args)
    lock.step_out()
    try:
        return fn(*args)
    finally:
        lock.step_in()

_STICKY = re.compile(r"CUDA error|AcceleratorError|illegal (memory access|instruction|address)|"
                     r"unspecified launch failure|device-side assert", re.I)


def context_lost(row: dict[str, Any]) -> bool:
    """True when the process's CUDA context can no longer be used after `row`: its error (or its
    baseline's) names a sticky CUDA error, or a synchronize on the current device now fails."""
    texts = [str(row.get("error") or ""), str((row.get("baseline") or {}).get("error") or "")]
    if any(_STICKY.search(t) for t in texts):
        return True
    try:
        import torch

        if torch.cuda.is_initialized():
            torch.cuda.synchronize()
    except Exception:  # noqa: BLE001 - any failure here means the context is gone
        return True
    return False


# =========================================================================== capture
def _flat_template(out: Any, tensors: list) -> Any:
    """The structure of `out` with each tensor replaced by its index in `tensors` (appended)."""
    import torch

    if isinstance(out, torch.Tensor):
        tensors.append(out)
        return len(tensors) - 1
    if isinstance(out, (tuple, list)):
        return [_flat_template(o, tensors) for o in out]
    if out is None or isinstance(out, (int, float, bool)):
        return {"const": out}
    raise RewriteError(f"the reference returns a {type(out).__name__}")


def _match_outputs(template: Any, wanted: list, got: list) -> Any:
    """Replace each wanted-tensor index in `template` by the index of the equal result in `got`."""
    import torch

    mapping = {}
    taken: set[int] = set()
    for i, w in enumerate(wanted):
        hit = None
        for j, g in enumerate(got):
            if j in taken or not isinstance(g, torch.Tensor) or g.shape != w.shape or g.dtype != w.dtype:
                continue
            if torch.allclose(g.float(), w.float(), rtol=1e-3, atol=1e-3, equal_nan=True):
                hit = j
                break
        if hit is None:
            raise RewriteError(f"output {i} of the reference is not among call()'s results")
        taken.add(hit)
        mapping[i] = hit

    def sub(t):
        if isinstance(t, int):
            return mapping[t]
        if isinstance(t, dict):
            return t
        return [sub(x) for x in t]

    return sub(template)


def _configs(code: str) -> dict[str, dict[str, Any]]:
    """The configuration Inductor's autotuner picked for each kernel of the loaded module of `code`."""
    from torch._inductor.codecache import PyCodeCache

    out: dict[str, dict[str, Any]] = {}
    for mod in reversed(list(PyCodeCache.modules)):
        try:
            text = Path(mod.__file__).read_text()
        except (OSError, TypeError, AttributeError):
            continue
        if text != code:
            continue
        for name, obj in vars(mod).items():
            launchers = getattr(obj, "launchers", None)
            if name.startswith("triton_") and launchers:
                cfg = launchers[0].config
                out[name] = {"kwargs": {k: int(v) for k, v in cfg.kwargs.items() if isinstance(v, int)},
                             "num_warps": int(cfg.num_warps), "num_stages": int(cfg.num_stages)}
        return out | {"__module__": {"call": mod.call}}  # type: ignore[dict-item]
    return out


def _state_expr(name: str) -> str:
    """`self.<path>` for a parameter or buffer name (`seq.0.weight` -> getattr(self.seq, '0').weight)."""
    expr = "self"
    for part in name.split("."):
        expr = f"{expr}.{part}" if part.isidentifier() else f"getattr({expr}, {part!r})"
    return expr


def _flat_source_expr(name: str, state: list[str], params: list[str]) -> str:
    """The expression of a graph input of the flat function (`L['flat_args'][i]`, `L['flat_args'][i].size()[k]`)."""
    m = re.fullmatch(r"L\['flat_args'\]\[(\d+)\](.*)", name)
    if not m:
        raise RewriteError(f"argument {name!r} is not one of the compiled function's inputs")
    i, rest = int(m.group(1)), m.group(2)
    if i < len(state):
        base = _state_expr(state[i])
    elif i - len(state) < len(params):
        base = params[i - len(state)]
    else:
        raise RewriteError(f"argument {name!r} is past the forward's parameters")
    expr = base + re.sub(r"\.(size|stride)\(\)\[(\d+)\]", r".\1(\2)", rest)
    try:
        ast.parse(expr, mode="eval")
    except SyntaxError as e:
        raise RewriteError(f"argument {name!r} has no Python expression") from e
    return expr


def _static_dims(node) -> Any:
    """For a graph input: per dimension the size Inductor fixed (None: symbolic); for a size input
    its fixed value or None."""
    import torch
    from torch.fx.experimental.symbolic_shapes import is_concrete_int

    ev = node.meta.get("example_value")
    if isinstance(ev, torch.Tensor):
        return [int(d) if is_concrete_int(d) else None for d in ev.shape]
    if isinstance(ev, (int, torch.SymInt)):
        return int(ev) if is_concrete_int(ev) else None
    return None


def _check_generic(problem: Problem, arg_exprs: list[str], static: list[Any], state: list[str]) -> None:
    """RewriteError when a size Inductor fixed differs at the problem's CPU sizes (the seed would
    then compute the wrong thing, or run out of bounds, at any other size)."""
    import torch

    from workbench.problems import load_source

    small = load_source(problem.source, name=problem.id, cpu=True)
    with torch.device("meta"):
        model = small.Model(*small.get_init_inputs())
        inputs = small.get_inputs()
    inputs = [x.to("meta") if isinstance(x, torch.Tensor) else x for x in inputs]
    scope: dict[str, Any] = {"self": model.to("meta"), "getattr": getattr}
    _, names = _forward_signature(problem.source)
    scope.update(zip(names, inputs))
    for expr, fixed in zip(arg_exprs, static):
        if fixed is None or fixed == [None] * (len(fixed) if isinstance(fixed, list) else 0):
            continue
        try:
            value = eval(expr, {"__builtins__": {}}, scope)  # noqa: S307 - our own expression over the reference
        except Exception as e:  # noqa: BLE001
            raise RewriteError(f"cannot evaluate {expr} at the CPU sizes: {e}") from e
        now = list(value.shape) if isinstance(value, torch.Tensor) else int(value)
        if isinstance(fixed, list):
            bad = [k for k, v in enumerate(fixed) if v is not None and (k >= len(now) or now[k] != v)]
            if bad:
                raise RewriteError(f"Inductor fixed {expr}'s size {[fixed[k] for k in bad]} (dims {bad}), "
                                   f"which is {[now[k] for k in bad if k < len(now)]} at the CPU sizes: the code "
                                   "is not size-generic")
        elif now != fixed:
            raise RewriteError(f"Inductor fixed {expr} to {fixed}, which is {now} at the CPU sizes")


def capture(problem: Problem, device: str = "cuda", lock: Any = None) -> dict[str, Any]:
    """Compile the reference and return {"code", "arg_exprs", "outputs", "configs", "compile_s"}
    (see the module doc); RewriteError when Inductor's output cannot be described. Called inside
    `lock.shared()` (a GpuLock) it steps out of it while Dynamo traces and Inductor compiles.

    What is compiled is the reference's forward as a function of its parameters, buffers and
    inputs (`torch.func.functional_call`): every tensor is then an input of the graph, so no
    size of a parameter is fixed in the code as it would be for a module's own attributes."""
    import torch
    import torch._dynamo
    from torch._inductor.compile_fx import compile_fx
    from torch._inductor.utils import run_and_get_code

    from workbench.problems import load_source

    lp = load_source(problem.source, name=problem.id)
    torch.manual_seed(0)
    model = lp.Model(*lp.get_init_inputs()).to(device).eval()
    torch.manual_seed(1)
    inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in lp.get_inputs()]
    with torch.no_grad():
        want = model(*inputs)
    wanted: list = []
    template = _flat_template(want, wanted)
    state = [n for n, _ in model.named_parameters()] + [n for n, _ in model.named_buffers()]
    flat = [t.detach() for _, t in model.named_parameters()] + [t.detach() for _, t in model.named_buffers()]
    _, params = _forward_signature(problem.source)
    if len(inputs) > len(params):
        raise RewriteError("the reference's forward takes fewer named parameters than get_inputs() gives")
    n_state = len(state)

    def flat_forward(*flat_args):
        return torch.func.functional_call(model, dict(zip(state, flat_args[:n_state])), tuple(flat_args[n_state:]))

    record: dict[str, Any] = {}

    def backend(gm, example_inputs):
        sources, static = [], []
        for node in gm.graph.nodes:
            if node.op == "placeholder":
                ga = node.meta.get("grapharg")
                name = ga.source.name if ga is not None and ga.source is not None else None
                sources.append(name() if callable(name) else name)  # a method before torch 2.10
                static.append(_static_dims(node))
        record["sources"], record["static"] = sources, static
        record["examples"] = list(example_inputs)
        return _runs_inside(compile_fx(gm, example_inputs), lock)

    patches = [(torch._dynamo.config, "force_parameter_static_shapes", False),
               (torch._dynamo.config, "force_nn_module_property_static_shapes", False),
               (torch._dynamo.config, "specialize_float", True)]
    try:
        import torch.fx.experimental._config as fx_config

        patches.append((fx_config, "use_duck_shape", False))
    except ImportError:  # pragma: no cover - older torch
        pass
    saved = [(obj, k, getattr(obj, k)) for obj, k, _ in patches if hasattr(obj, k)]
    for obj, k, v in patches:
        if hasattr(obj, k):
            setattr(obj, k, v)
    # Dynamo looks classes up by their module: the problem's, executed from text, is registered
    # for the compile only.
    mod_name = lp.module.__name__
    sys.modules[mod_name] = lp.module
    t0 = time.time()
    try:
        compiled = torch.compile(flat_forward, backend=backend, dynamic=True, fullgraph=True)
        with torch.no_grad():
            _, codes = _compiling_outside(run_and_get_code, lock, compiled, *flat, *inputs)
    except Exception as e:  # noqa: BLE001 - a reference Inductor cannot compile gets no Inductor seed
        raise RewriteError(f"torch.compile failed: {type(e).__name__}: {str(e)[:500]}") from e
    finally:
        sys.modules.pop(mod_name, None)
        for obj, k, v in saved:
            setattr(obj, k, v)
    compile_s = time.time() - t0
    if len(codes) != 1 or "sources" not in record:
        raise RewriteError(f"Inductor produced {len(codes)} output modules (one graph expected)")
    code = codes[0]
    if any(s is None for s in record["sources"]):
        raise RewriteError("a graph input has no source")
    arg_exprs = [_flat_source_expr(s, state, params) for s in record["sources"]]
    _check_generic(problem, arg_exprs, record["static"], state)
    configs = _configs(code)
    loaded = configs.pop("__module__", None)
    if loaded is None:
        raise RewriteError("the compiled module was not found in Inductor's code cache")
    args = [int(a) if not isinstance(a, torch.Tensor) else a for a in record["examples"]]
    with torch.no_grad():
        got = list(loaded["call"](list(args)))
    outputs = _match_outputs(template, wanted, got)
    return {"code": code, "arg_exprs": arg_exprs, "outputs": outputs, "configs": configs,
            "compile_s": round(compile_s, 3), "torch_version": torch.__version__}


def validate(problem: Problem, source: str, device: str = "cuda", small: bool = False) -> float:
    """Largest difference between the seed's and the reference's outputs at full size (`small`:
    at the problem's CPU sizes, a second shape), relative to 1 + the output's largest magnitude;
    the problem's own code and a seed written here are run in this process."""
    import tempfile

    import torch

    from workbench.execution.worker import _import_candidate, copy_state
    from workbench.problems import load_source
    from workbench.records import candidate_id

    lp = load_source(problem.source, name=problem.id, cpu=small)
    torch.manual_seed(0)
    ref = lp.Model(*lp.get_init_inputs()).to(device).eval()
    with tempfile.TemporaryDirectory(prefix="wb_inductor_seed_") as tmp:  # Triton reads kernels from a file
        mod = _import_candidate(source, Path(tmp), candidate_id(source), lp.overrides)
        new = mod.ModelNew(*lp.get_init_inputs())
        copy_state(ref, new)
        new = new.to(device).eval()
        torch.manual_seed(2)
        inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in lp.get_inputs()]
        with torch.no_grad():
            a, b = ref(*inputs), new(*inputs)
    wa: list = []
    wb: list = []
    _flat_template(a, wa)
    _flat_template(b, wb)
    if len(wa) != len(wb):
        return float("inf")
    err = 0.0
    for x, y in zip(wa, wb):
        if x.shape != y.shape:
            return float("inf")
        if x.numel():
            scale = 1.0 + float(x.float().abs().max())
            err = max(err, float((x.float() - y.float()).abs().max()) / scale)
    return err


def seed_for(problem: Problem, device: str = "cuda", lock: Any = None) -> dict[str, Any]:
    """capture + rewrite + validate one problem: {"problem_id", "ok", "source" | "error", ...};
    inside `lock.shared()` when a lock is given (the compile steps out of it, see capture)."""
    out: dict[str, Any] = {"problem_id": problem.id}
    try:
        cap = capture(problem, device, lock)
        out["capture"] = {k: cap[k] for k in ("code", "arg_exprs", "outputs", "configs", "torch_version")}
        out["compile_s"] = cap["compile_s"]
        src = rewrite(problem, cap["code"], cap["arg_exprs"], cap["outputs"], cap["configs"])
        out["source"] = src
        out["max_rel_err"] = validate(problem, src, device)
        out["max_rel_err_small"] = validate(problem, src, device, small=True)
    except RewriteError as e:
        return out | {"ok": False, "error": str(e)[:1000]}
    except Exception as e:  # noqa: BLE001 - one problem's failure is its result
        return out | {"ok": False, "error": f"{type(e).__name__}: {str(e)[:1000]}"}
    worst = max(out["max_rel_err"], out["max_rel_err_small"])
    if not worst <= VALIDATE_TOL:
        return out | {"ok": False, "error": f"the rewritten seed differs from the reference by {worst:.3g} (relative)"}
    return out | {"ok": True}


def seed_on_gpu(problem: Problem, gpu: int, timeout_s: float = 600.0) -> dict[str, Any]:
    """`seed_for(problem)` in a subprocess on local GPU `gpu` (the caller holds no CUDA context):
    the row `main` writes ({"ok", "source" | "error", ...})."""
    import os
    import subprocess
    import tempfile

    root = str(Path(__file__).resolve().parents[2])
    with tempfile.TemporaryDirectory(prefix="wb-inductor-seed-") as tmp:
        todo, out = Path(tmp) / "problem.jsonl", Path(tmp) / "seed.jsonl"
        todo.write_text(json.dumps(problem.to_dict()) + "\n")
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(gpu),
                   PYTHONPATH=root + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else ""))
        try:
            proc = subprocess.run([sys.executable, "-m", "workbench.seeds.inductor", str(todo), str(out)], env=env,
                                  capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return {"problem_id": problem.id, "ok": False, "error": f"no Inductor seed within {timeout_s:.0f} s"}
        rows = [json.loads(ln) for ln in out.read_text().splitlines() if ln.strip()] if out.exists() else []
    if not rows:
        return {"problem_id": problem.id, "ok": False,
                "error": f"the Inductor process ended without a result (exit {proc.returncode}): {proc.stderr[-300:]}"}
    return rows[-1]


def _stepping_inductor(mode: str, lock: Any) -> Any:
    """torch.compile's own Inductor backend for `mode` (the object `torch.compile(mode=...)`
    builds), with each compiled graph wrapped by `_runs_inside(lock)`; None without a lock or
    where this torch has no such class (then the compile holds the lock throughout)."""
    import torch

    base = getattr(torch, "_TorchCompileInductorWrapper", None)
    if lock is None or base is None:
        return None

    class Stepping(base):  # type: ignore[misc, valid-type]
        def __call__(self, model_, inputs_, **kwargs):
            return _runs_inside(super().__call__(model_, inputs_, **kwargs), lock)

    try:
        return Stepping(mode, None, None)
    except TypeError:
        return None


def baseline(problem: Problem, mode: str = "default", lock_path: str | None = None) -> dict[str, Any]:
    """The reference timed eager and under torch.compile (`mode`, static shapes, no CUDA graphs in
    the default mode) in this process, interleaved on the same inputs (ratio of medians), L2
    flushed; with `lock_path` (an executor's GPU lock) the timed region holds the GPU alone, the
    model's setup and the compiled code's runs share it, and Dynamo's tracing and Inductor's
    compile (CPU work) hold none of it."""
    import torch

    from workbench.execution.gpu_lock import GpuLock
    from workbench.execution.timing import L2Flusher, time_cuda_pair
    from workbench.problems import load_source

    lock = GpuLock(lock_path)
    lp = load_source(problem.source, name=problem.id)
    with lock.shared():
        torch.manual_seed(0)
        model = lp.Model(*lp.get_init_inputs()).cuda().eval()
        sets = []
        for k in range(3):
            torch.manual_seed(9000 + k)
            sets.append([x.cuda() if isinstance(x, torch.Tensor) else x for x in lp.get_inputs()])
        backend = _stepping_inductor(mode, lock if lock_path else None)
        compiled = torch.compile(model, backend=backend) if backend is not None else torch.compile(model, mode=mode)
        t0 = time.time()
        with torch.no_grad():
            if backend is not None:
                _compiling_outside(compiled, lock, *sets[0])
            else:
                compiled(*sets[0])
        torch.cuda.synchronize()
        compile_s = time.time() - t0
        flush = L2Flusher(torch.device("cuda"))

    def call(m):
        def fn(inputs):
            with torch.no_grad():
                return m(*inputs)
        return fn

    with lock.exclusive():
        eager, comp = time_cuda_pair(call(model), call(compiled), sets, flush=flush)
    return {"mode": mode, "eager_ms": eager.median_ms, "compiled_ms": comp.median_ms,
            "compile_speedup": eager.median_ms / comp.median_ms, "compile_s": round(compile_s, 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("problems_jsonl")
    ap.add_argument("out_jsonl")
    ap.add_argument("--baselines", action="store_true",
                    help="also time the reference eager and under torch.compile (default mode, static shapes)")
    ap.add_argument("--gpu-lock", default=None, help="an executor's GPU lock file: time alone, compile shared")
    ap.add_argument("--skip", default="", help="comma-separated problem ids not to do (a previous run died on them)")
    args = ap.parse_args(argv)
    from workbench.execution.gpu_lock import GpuLock

    skip = set(filter(None, args.skip.split(",")))
    problems = [Problem.from_dict(json.loads(ln)) for ln in Path(args.problems_jsonl).read_text().splitlines()
                if ln.strip()]
    lock = GpuLock(args.gpu_lock)
    if args.gpu_lock:
        # Triton's compiles of a validated seed's kernels (at their first launch) step out of the
        # shared hold too, as an executor's workers' do.
        from workbench.execution.worker import compile_outside_lock

        compile_outside_lock(lock)
    with open(args.out_jsonl, "a") as f:
        for p in problems:
            if p.id in skip:
                continue
            print(f"inductor: {p.id} ...", file=sys.stderr, flush=True)
            import torch._dynamo

            torch._dynamo.reset()
            t0 = time.time()
            with lock.shared():
                row = seed_for(p, lock=lock if args.gpu_lock else None)
            row["wall_s"] = round(time.time() - t0, 2)
            row.pop("capture", None)
            if args.baselines:
                torch._dynamo.reset()
                try:
                    row["baseline"] = baseline(p, lock_path=args.gpu_lock)
                except Exception as e:  # noqa: BLE001 - a reference torch.compile cannot handle is a result too
                    row["baseline"] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
            f.write(json.dumps(row) + "\n")
            f.flush()
            print(f"inductor: {p.id} {'ok' if row['ok'] else row['error'][:200]}", file=sys.stderr, flush=True)
            if context_lost(row):
                print(f"inductor: the CUDA context is lost after {p.id}; exiting for a fresh process",
                      file=sys.stderr, flush=True)
                return EXIT_CONTEXT_LOST
    return 0


if __name__ == "__main__":
    sys.exit(main())
