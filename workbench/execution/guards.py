"""Guards against kernels that cheat the measurement.

Static checks read the candidate's source (AST); dynamic checks look at what the candidate
did when it ran. Each finding is a short reason; any finding makes the measurement's status
`cheat_suspected`. These are heuristics with tests for each pattern, not a proof: a
determined adversary with arbitrary code execution can still fool an in-process check, which
is why the verdict is not decided here: the judge's clean processes draw the inputs, take
the times and compare the outputs (timer.py, session.py); these checks are a first filter.
"""
from __future__ import annotations

import ast
import functools
import threading
from typing import Any, Iterable

# Calls that only shape, allocate or move data: never "the reference's computation".
_STRUCTURAL = {
    "view", "reshape", "contiguous", "size", "dim", "numel", "stride", "permute", "transpose", "t",
    "unsqueeze", "squeeze", "flatten", "expand", "expand_as", "to", "float", "half", "bfloat16",
    "empty", "empty_like", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "arange",
    "cat", "stack", "split", "chunk", "narrow", "select", "clone", "copy_", "new_empty", "new_zeros",
    "data_ptr", "is_contiguous", "item", "tolist", "type", "cuda", "cpu", "detach", "unbind",
    "next_power_of_2", "cdiv", "len", "range", "min", "max", "int", "float", "tuple", "list", "getattr",
    "super", "isinstance", "print", "Parameter", "view_as", "reshape_as", "as_strided",
}
_TORCH_ROOTS = {"torch", "F", "nn", "functional"}
_FORBIDDEN_IMPORTS = {"threading", "multiprocessing", "concurrent", "asyncio", "subprocess",
                      "inspect", "gc", "ctypes", "signal", "importlib", "_thread", "socket", "sqlite3",
                      "shutil", "urllib", "http", "requests", "pty", "fcntl", "mmap", "resource", "pickle",
                      "marshal", "cffi", "workbench", "_ctypes", "posix", "select", "selectors"}
# Calls a kernel never needs: processes, signals, file and descriptor writes, environment.
_FORBIDDEN_CALLS = {"kill", "killpg", "getppid", "setsid", "setpgid", "fork", "forkpty", "vfork", "system",
                    "popen", "execv", "execve", "execvp", "execl", "execlp", "spawnv", "spawnl", "posix_spawn",
                    "write_text", "write_bytes", "unlink", "rmdir", "remove", "removedirs", "dup2", "fdopen",
                    "chmod", "chown", "symlink", "mkfifo", "putenv", "unsetenv", "setrlimit",
                    "settrace", "setprofile", "addaudithook"}
_PATCH_ROOTS = {"torch", "time", "triton", "builtins", "__builtins__", "np", "numpy", "time_module"}
# Ways to reach the reference module or its source from the candidate.
_REFERENCE_PEEKS = {"modules", "_getframe", "get_objects", "getsource", "f_back", "f_globals"}
_PRECISION_NAMES = {"allow_tf32", "set_float32_matmul_precision", "allow_bf16_reduced_precision_reduction",
                    "allow_fp16_reduced_precision_reduction"}


def _walk(node: ast.AST):
    """Every node under `node` (itself included), as ast.walk gives them but depth first and
    without its per-field generators: the checks here collect sets and do not depend on order."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        for name in n._fields:
            v = getattr(n, name, None)
            if isinstance(v, ast.AST):
                stack.append(v)
            elif isinstance(v, list):
                stack.extend(x for x in v if isinstance(x, ast.AST))


def _call_name(node: ast.Call) -> str | None:
    f = node.func
    if isinstance(f, ast.Attribute):
        return f.attr
    if isinstance(f, ast.Name):
        return f.id
    return None


def _root(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.value if not isinstance(node, ast.Call) else node.func
    return node.id if isinstance(node, ast.Name) else None


def _forward(tree: ast.Module, cls_name: str) -> ast.FunctionDef | None:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls_name:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "forward":
                    return item
    return None


def _ops(fn: ast.AST | None) -> set[str]:
    """Computational op names called in a function (torch functions, tensor methods, `@`)."""
    ops: set[str] = set()
    if fn is None:
        return ops
    for node in _walk(fn):
        if isinstance(node, ast.Call):
            name = _call_name(node)
            if name and name not in _STRUCTURAL and not name.startswith("_"):
                root = _root(node.func)
                if root in _TORCH_ROOTS or isinstance(node.func, ast.Attribute):
                    ops.add(name)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            ops.add("matmul")
    # Normalise aliases: x @ w, torch.mm, F.linear all compute a matmul.
    alias = {"mm": "matmul", "bmm": "matmul", "linear": "matmul", "addmm": "matmul", "einsum": "matmul"}
    return {alias.get(o, o) for o in ops}


#: Vendor-library GEMM and convolution entry points (cuBLAS / cuDNN): what torch.compile's own
#: output calls as "extern kernels" around the Triton kernels it generates.
LIBRARY_OPS = frozenset({"matmul", "baddbmm", "convolution", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                         "conv_transpose2d", "conv_transpose3d"})


def _is_kernel(fn: ast.FunctionDef) -> bool:
    return any((_call_name(d) if isinstance(d, ast.Call) else getattr(d, "attr", getattr(d, "id", None)))
               in ("jit", "autotune", "heuristics") for d in fn.decorator_list)


def _reach(tree: ast.Module) -> tuple[list[ast.FunctionDef], bool]:
    """What ModelNew's forward runs in this file: its forward (or the forward it inherits from a
    class of the file), the module-level functions and the methods of its classes it calls,
    transitively, `@triton.jit` kernels excluded; and whether any of them launches a kernel of
    the file (`kernel[grid](...)`)."""
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    kernels = {name for name, f in funcs.items() if _is_kernel(f)}
    chain, cls = [], classes.get("ModelNew")
    while cls is not None and cls not in chain:
        chain.append(cls)
        base = cls.bases[0] if cls.bases else None
        cls = classes.get(base.id) if isinstance(base, ast.Name) else None
    methods: dict[str, ast.FunctionDef] = {}
    for c in reversed(chain):
        methods.update({n.name: n for n in c.body if isinstance(n, ast.FunctionDef)})
    todo = [methods["forward"]] if "forward" in methods else []
    seen: list[ast.FunctionDef] = []
    launches = False
    while todo:
        fn = todo.pop()
        if fn in seen or _is_kernel(fn):
            continue
        seen.append(fn)
        for node in _walk(fn):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            if isinstance(f, ast.Subscript) and isinstance(f.value, ast.Name) and f.value.id in kernels:
                launches = True
            elif isinstance(f, ast.Name) and f.id in funcs:
                todo.append(funcs[f.id])
            elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self" \
                    and f.attr in methods:
                todo.append(methods[f.attr])
    return seen, launches


@functools.lru_cache(maxsize=64)
def _reference_work(reference_source: str, ref_ops: frozenset[str]) -> bool:
    """Whether the reference's forward computes more than library GEMMs / convolutions: another
    op, or an arithmetic operator."""
    if ref_ops - LIBRARY_OPS:
        return True
    try:
        fn = _forward(ast.parse(reference_source), "Model")
    except SyntaxError:
        return False
    return fn is not None and any(
        (isinstance(n, ast.BinOp) and not isinstance(n.op, ast.MatMult)) or isinstance(n, (ast.UnaryOp, ast.AugAssign))
        for n in _walk(fn))


@functools.lru_cache(maxsize=64)
def _reference_main_ops(reference_source: str) -> frozenset[str]:
    try:
        tree = ast.parse(reference_source)
    except SyntaxError:
        return frozenset()
    ops = _ops(_forward(tree, "Model"))
    # Submodules called as self.conv(x) show up as their attribute names: map common layers.
    return frozenset(o for o in ops if o not in {"forward"})


def static_findings(candidate_source: str, reference_source: str) -> list[str]:
    """Reasons to suspect the candidate source of cheating (empty when none)."""
    try:
        tree = ast.parse(candidate_source)
    except SyntaxError:
        return []  # reported as a compile error elsewhere
    found: list[str] = []
    for node in _walk(tree):
        if isinstance(node, ast.Try):
            found.append(f"try/except at line {node.lineno}: a fallback path can hide a failing kernel")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for n in names:
                if n.split(".")[0] in _FORBIDDEN_IMPORTS:
                    found.append(f"imports {n} at line {node.lineno}: threads, processes, introspection "
                                 "or signals are not allowed in a kernel")
        elif isinstance(node, ast.Call):
            name = _call_name(node)
            root = _root(node.func)
            if name in ("Stream", "stream", "ExternalStream") and root == "torch":
                found.append(f"uses a CUDA stream at line {node.lineno}: work on a side stream escapes the timer")
            if name in _PRECISION_NAMES:
                found.append(f"changes matmul precision at line {node.lineno}")
            if name in ("setattr", "__setattr__") and node.args and _root(node.args[0]) in _PATCH_ROOTS:
                found.append(f"patches {ast.unparse(node.args[0])} at line {node.lineno}")
            builtin_exec = isinstance(node.func, ast.Name) and name in ("exec", "eval", "compile")
            if name in ("_getframe", "get_objects", "__import__", "import_module") or builtin_exec:
                found.append(f"introspection or dynamic code ({name}) at line {node.lineno}")
            if name == "open":
                found.append(f"opens a file at line {node.lineno}: a kernel must not read the "
                             "reference or any other file")
            if name in _FORBIDDEN_CALLS or (name in ("write", "replace", "rename", "open", "read") and root == "os"):
                found.append(f"calls {name} at line {node.lineno}: processes, signals, files and the "
                             "environment are out of a kernel's reach")
        elif isinstance(node, ast.Attribute) and _root(node) == "sys" and node.attr in ("stdin", "__stdin__"):
            found.append(f"reads {ast.unparse(node)} at line {node.lineno}: the worker's job channel is out "
                         "of a kernel's reach")
        elif isinstance(node, ast.Attribute) and node.attr in _REFERENCE_PEEKS and _root(node) in ("sys", "inspect"):
            found.append(f"reads {ast.unparse(node)} at line {node.lineno}: looking up other modules "
                         "(the reference) is not allowed")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "_wb_problem_" in node.value:
            found.append(f"names the reference module at line {node.lineno}")
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Subscript) and _root(t) in _PATCH_ROOTS | {"vars", "globals"}:
                    found.append(f"assigns to {ast.unparse(t)} at line {node.lineno}: patching "
                                 "torch, timers or builtins is not allowed")
                if isinstance(t, ast.Attribute):
                    r = _root(t)
                    if r in _PATCH_ROOTS:
                        found.append(f"assigns to {ast.unparse(t)} at line {node.lineno}: patching "
                                     "torch, timers or the runtime is not allowed")
                    if t.attr in _PRECISION_NAMES:
                        found.append(f"sets {t.attr} at line {node.lineno}: lowers matmul precision")
        elif isinstance(node, ast.Subscript):
            key = node.slice
            for sub in _walk(key):
                if isinstance(sub, ast.Call) and _call_name(sub) in ("data_ptr", "id"):
                    found.append(f"indexes a cache by {_call_name(sub)}() at line {node.lineno}: "
                                 "results keyed by pointer are reused across calls")
                    break
    # Re-running PyTorch. The ops counted are those of everything ModelNew's forward runs in the
    # file (`_reach`: a helper function or an inherited forward hides nothing). Library GEMMs and
    # convolutions (LIBRARY_OPS) do not count when the candidate launches Triton kernels and the
    # reference does more than those library ops: a library GEMM beside the kernels that do the
    # rest is what torch.compile's own output is. A reference that is only library ops must be
    # done by the candidate's kernels.
    ref_ops = _reference_main_ops(reference_source)
    reached, launches = _reach(tree)
    cand_ops: set[str] = set()
    for fn in reached:
        cand_ops |= _ops(fn)
    if launches and _reference_work(reference_source, ref_ops):
        cand_ops -= LIBRARY_OPS
    if ref_ops and ref_ops <= cand_ops:
        found.append("ModelNew.forward calls every computational op of the reference "
                     f"({', '.join(sorted(ref_ops))}): it re-runs PyTorch instead of a kernel")
    return sorted(set(found))


# --------------------------------------------------------------------------- dynamic
#: Namespaces whose every callable is watched: replacing any of them (under any name the
#: candidate imported it as) shows as a changed identity here.
_WATCHED_SPACES = ("torch", "torch.nn.functional", "torch.Tensor", "torch.nn.Module", "torch.cuda",
                   "torch.cuda.Event", "torch.cuda.Stream", "torch.autograd.grad_mode", "time", "builtins",
                   "numpy", "triton", "triton.testing", "workbench.execution.correctness",
                   "workbench.execution.guards", "workbench.execution.timing", "workbench.execution.worker",
                   "workbench.execution.tensorfile", "workbench.execution.protocol", "workbench.execution.gate",
                   "workbench.execution.gate_cuda", "workbench.execution.models", "workbench.execution.localcheck",
                   "os", "sys")
_WATCHED = [
    ("torch", "matmul"), ("torch", "allclose"), ("torch", "isclose"), ("torch", "equal"),
    ("torch", "softmax"), ("torch", "empty"), ("torch", "randn"),
    ("torch.cuda", "synchronize"), ("torch.cuda.Event", "elapsed_time"), ("torch.cuda.Event", "record"),
    ("torch.Tensor", "__eq__"), ("torch.Tensor", "clone"), ("torch.Tensor", "__sub__"),
    ("torch.nn.Module", "__call__"), ("torch.nn.Module", "_call_impl"),
    ("time", "perf_counter"), ("time", "time"),
]
_SKIP = {"sys": {"stdout", "stderr", "stdin", "last_value", "last_type", "last_traceback", "last_exc",
                 "exc_info", "modules", "path", "argv", "flags", "meta_path", "path_hooks", "path_importer_cache",
                 "displayhook", "excepthook"}}


def _resolve(path: str) -> Any:
    import importlib

    parts = path.split(".")
    obj = importlib.import_module(parts[0])
    for i, p in enumerate(parts[1:], 1):
        try:
            obj = getattr(obj, p)
        except AttributeError:
            obj = importlib.import_module(".".join(parts[:i + 1]))
    return obj


_CLASS_NAMES: dict[str, list[str]] = {}


def _callables(space: str) -> dict[str, int]:
    import sys

    if space.startswith("workbench.") and space not in sys.modules:
        return {}
    try:
        obj = _resolve(space)
    except (AttributeError, ImportError):
        return {}
    skip = _SKIP.get(space, set())
    out = {}
    if isinstance(obj, type):
        # Classes: what an attribute lookup finds, inherited methods included (a method set on
        # torch.Tensor shadows the one torch._C.TensorBase defines). The names are listed once.
        names = _CLASS_NAMES.get(space)
        if names is None:
            names = _CLASS_NAMES[space] = list(dir(obj))
        items = []
        mro = obj.__mro__
        for name in names:
            for klass in mro:
                d = vars(klass)
                if name in d:
                    items.append((name, d[name]))
                    break
    else:
        items = list(vars(obj).items())
    for name, value in items:
        if name in skip or name.startswith("__") and name not in ("__call__", "__eq__", "__sub__", "__add__",
                                                                  "__mul__", "__truediv__", "__matmul__"):
            continue
        if callable(value) or isinstance(value, (staticmethod, classmethod, property)):
            out[name] = id(value)
    return out


class RuntimeSnapshot:
    """Identities of every callable a cheat could patch (torch, its functional API, tensor and
    module methods, CUDA events, timers, builtins and the checker's own modules), precision
    flags and the thread count."""

    def __init__(self) -> None:
        import torch

        self.functions = {}
        for mod, name in _WATCHED:
            try:
                self.functions[(mod, name)] = getattr(_resolve(mod), name)
            except (AttributeError, ImportError):
                continue
        self.spaces = {space: _callables(space) for space in _WATCHED_SPACES}
        self.flags = {
            "cuda.matmul.allow_tf32": torch.backends.cuda.matmul.allow_tf32,
            "cudnn.allow_tf32": torch.backends.cudnn.allow_tf32,
            "float32_matmul_precision": torch.get_float32_matmul_precision(),
            "cudnn.benchmark": torch.backends.cudnn.benchmark,
            "deterministic": torch.are_deterministic_algorithms_enabled(),
        }
        self.threads = threading.active_count()

    def changes_since(self, before: "RuntimeSnapshot", threads: bool = True) -> list[str]:
        """What changed since `before`; `threads=False` ignores the thread count (compilers
        may legitimately start worker threads while a candidate is imported and compiled)."""
        out = []
        for key, fn in before.functions.items():
            if self.functions.get(key) is not fn:
                out.append(f"{key[0]}.{key[1]} was replaced while the candidate ran")
        named = {f"{m}.{n}" for m, n in before.functions}
        for space, ids in before.spaces.items():
            now = self.spaces.get(space, {})
            for name, ident in ids.items():
                if name in now and now[name] != ident and f"{space}.{name}" not in named:
                    out.append(f"{space}.{name} was replaced while the candidate ran")
        for k, v in before.flags.items():
            if self.flags.get(k) != v:
                out.append(f"precision flag {k} changed from {v} to {self.flags.get(k)}")
        if threads and self.threads > before.threads:
            out.append(f"{self.threads - before.threads} background thread(s) left running "
                       "after the candidate returned")
        return out


def output_findings(out: Any, inputs: Iterable[Any], reference_outputs: Iterable[Any]) -> list[str]:
    """Type, aliasing and degenerate-output checks on one candidate output."""
    import torch

    found = []
    tensors = list(out) if isinstance(out, (tuple, list)) else [out]
    for t in tensors:
        if not isinstance(t, torch.Tensor):
            continue
        if type(t) is not torch.Tensor:
            found.append(f"output is a {type(t).__name__}, a tensor subclass (lazy or deferred values)")
            continue
        if t.numel() == 0:
            continue
        lo, hi = _span(t)
        for other in list(inputs) + list(reference_outputs):
            if isinstance(other, torch.Tensor) and other.device == t.device and other.numel():
                olo, ohi = _span(other)
                if lo < ohi and olo < hi:
                    found.append("output memory overlaps an input or the reference's output")
                    break
    return found


def _span(t) -> tuple[int, int]:
    st = t.untyped_storage()
    return st.data_ptr(), st.data_ptr() + st.nbytes()


def degenerate_finding(out, ref) -> str | None:
    """A constant output where the reference is not constant passes loose tolerances only by luck."""
    import torch

    if not (isinstance(out, torch.Tensor) and isinstance(ref, torch.Tensor)) or out.numel() < 16:
        return None
    o, r = out.detach().float(), ref.detach().float()
    if torch.all(o == o.reshape(-1)[0]) and not torch.all(r == r.reshape(-1)[0]):
        return "output is constant while the reference's is not"
    return None


def roofline_finding(candidate_ms: float, floor_ms: float | None, slack: float = 0.8) -> str | None:
    """A time under the analytic roofline floor is physically implausible."""
    if floor_ms is None or candidate_ms <= 0:
        return None
    if candidate_ms < slack * floor_ms:
        return (f"candidate ran in {candidate_ms:.4f} ms, under the roofline floor of {floor_ms:.4f} ms "
                "for the problem's minimum bytes and FLOPs: the work was not done (or not timed)")
    return None
