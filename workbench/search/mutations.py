"""Mutation operators over Triton candidate sources: the search's LLM-free generator.

Each operator finds *sites* in the source with `ast` (launch keywords, `triton.Config`
entries, `tl.range` loops, dtypes inside `@triton.jit` functions) and edits the text at the
site's exact span, so comments and layout survive. Operators:

- `block`      a BLOCK*/TILE* constexpr value given as an integer at launch or in a
               `triton.Config` (powers of two, 16..16384; values computed at run time, such
               as `triton.next_power_of_2(n)`, are left alone).
- `num_warps`  change (or add, for non-autotuned launches) `num_warps`: 1..32, powers of two.
- `num_stages` change (or add) `num_stages`: 1..6.
- `grid`       the launch grid's granularity: a GROUP*/ROWS*/*PER_PROGRAM*/SPLIT*/CHUNK*
               constexpr (work per program), powers of two 1..64.
- `unroll`     an UNROLL* constexpr, or `loop_unroll_factor` of a `tl.range`/`range` loop in a
               kernel (1..16).
- `acc_dtype`  tl.float32 <-> tl.float16/tl.bfloat16 in `tl.zeros`/`tl.full` dtypes and `.to()`
               casts inside kernels.
- `swap_order` reorder two adjacent independent `tl.load` statements, or swap the operands of a
               commutative `+`/`*` in a kernel.
- `dot_precision` the fp32 `tl.dot` precision of one kernel, every `input_precision="ieee"` of it
               to `"tf32x3"` or back: three TF32 tensor-core products with an error near fp32's
               (under KernelBench's fp32 tolerance of 1e-4), where "ieee" runs on the CUDA cores.
               One-pass "tf32" (errors near 1e-3) is not offered. A dot of 16-bit inputs ignores
               the setting.

Invariants: the functions are pure and deterministic given the `random.Random` passed in; a
child always parses, compiles and defines a top-level `ModelNew`, and differs from its parent.
An operator that cannot apply returns `MutationRefused` with the reason, never a broken child.
"""
from __future__ import annotations

import ast
import functools
import random
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from workbench.records import Candidate, candidate_id

OPS: tuple[str, ...] = ("block", "num_warps", "num_stages", "grid", "unroll", "acc_dtype", "swap_order",
                        "dot_precision")


@dataclass(frozen=True)
class MutationRefused:
    """An operator could not produce a valid child; `reason` says why (shown in logs/UI)."""

    op: str
    reason: str

    def __bool__(self) -> bool:  # lets callers write `if not result:`
        return False


# --------------------------------------------------------------------------- source spans
class _Src:
    """A parsed source with byte-offset spans (ast column offsets are UTF-8 byte offsets).

    Read-only once built (operators return edits, never change the tree), so one parse of a
    source serves every operator applied to it (`_parsed`)."""

    def __init__(self, text: str):
        self.text = text
        self.data = text.encode()
        self.tree = ast.parse(text)
        self._line_start = [0]
        for line in self.data.splitlines(keepends=True):
            self._line_start.append(self._line_start[-1] + len(line))
        self.jit_funcs = [n for n in ast.walk(self.tree)
                          if isinstance(n, ast.FunctionDef) and any(_is_jit(d) for d in n.decorator_list)]
        self.autotuned = {f.name for f in self.jit_funcs
                          if any(_dotted(d.func if isinstance(d, ast.Call) else d).endswith("autotune")
                                 for d in f.decorator_list)}
        self.constexprs = {a.arg for f in self.jit_funcs for a in f.args.args + f.args.kwonlyargs
                           if a.annotation is not None and _dotted(a.annotation).endswith("constexpr")}
        self.parents: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(self.tree):
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (self._line_start[node.lineno - 1] + node.col_offset,
                self._line_start[node.end_lineno - 1] + node.end_col_offset)

    def segment(self, node: ast.AST) -> str:
        a, b = self.span(node)
        return self.data[a:b].decode()

    def enclosing_function(self, node: ast.AST) -> ast.AST:
        cur = self.parents.get(node)
        while cur is not None and not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef)):
            cur = self.parents.get(cur)
        return cur if cur is not None else self.tree

    def in_jit(self, node: ast.AST) -> bool:
        f = self.enclosing_function(node)
        while f is not self.tree:
            if f in self.jit_funcs:
                return True
            f = self.enclosing_function(f)
        return False

    def memo(self, key: str, build: Callable[[], Any]) -> Any:
        """`build()`, computed once per parse: for what an operator derives from the tree alone
        (its list of possible edits); the random choice among them stays with the caller."""
        cache = self.__dict__.setdefault("_memo", {})
        if key not in cache:
            cache[key] = build()
        return cache[key]

    @functools.cached_property
    def int_literals(self) -> list[tuple[str, ast.Constant]]:
        """(parameter name, positive integer literal it resolves to) for every keyword of a launch
        or `triton.Config` call, in call and keyword order (see `_int_sites`)."""
        out: list[tuple[str, ast.Constant]] = []
        for call in _launch_calls(self) + _config_calls(self):
            pairs: list[tuple[str, ast.AST]] = [(k.arg, k.value) for k in call.keywords if k.arg]
            for a in call.args:  # triton.Config({"BLOCK": 64}, ...)
                if isinstance(a, ast.Dict):
                    pairs += [(k.value, v) for k, v in zip(a.keys, a.values)
                              if isinstance(k, ast.Constant) and isinstance(k.value, str)]
            for name, value in pairs:
                out += [(name, lit) for lit in _resolve_int(self, value, call) if lit.value > 0]
        return out

    def apply(self, edits: Sequence[tuple[int, int, str]]) -> str:
        out = self.data
        for a, b, new in sorted(edits, key=lambda e: e[0], reverse=True):
            out = out[:a] + new.encode() + out[b:]
        return out.decode()


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return _dotted(node.value) + "." + node.attr
    return ""


def _is_jit(dec: ast.AST) -> bool:
    name = _dotted(dec.func if isinstance(dec, ast.Call) else dec)
    return name.split(".")[-1] in ("jit", "autotune", "heuristics")


def _launch_calls(src: _Src) -> list[ast.Call]:
    """`kernel[grid](...)` calls outside kernels."""
    return src.memo("launch_calls", lambda: [
        n for n in ast.walk(src.tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript) and not src.in_jit(n)])


def _config_calls(src: _Src) -> list[ast.Call]:
    return src.memo("config_calls", lambda: [
        n for n in ast.walk(src.tree) if isinstance(n, ast.Call) and _dotted(n.func).split(".")[-1] == "Config"])


# --------------------------------------------------------------------------- integer sites
@dataclass(frozen=True)
class _IntSite:
    name: str           # the parameter it sets, e.g. "BLOCK_M"
    node: ast.Constant  # the literal to rewrite
    value: int


def _is_int(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


def _resolve_int(src: _Src, value: ast.AST, where: ast.AST, depth: int = 0) -> list[ast.Constant]:
    """The integer literals that `value` stands for: itself; a single `name = <int>` assignment in
    the enclosing function (then the module); or, for a parameter of a launcher function, the
    literals its callers pass (its default when no caller passes one)."""
    if _is_int(value):
        return [value]  # type: ignore[list-item]
    if not isinstance(value, ast.Name) or depth > 2:
        return []
    func = src.enclosing_function(where)
    if isinstance(func, ast.FunctionDef):
        params = func.args.args + func.args.kwonlyargs
        names = [a.arg for a in params]
        if value.id in names:
            return _resolve_param(src, func, value.id, depth)
    for scope in (func, src.tree):
        found = _assignments(src, scope).get(value.id, [])
        if len(found) == 1 and _is_int(found[0]):
            return [found[0]]  # type: ignore[list-item]
        if found:
            return []
    return []


def _assignments(src: _Src, scope: ast.AST) -> dict[str, list[ast.AST]]:
    """The values of every `name = value` assignment (one target, a plain name) anywhere in
    `scope`, by name, in ast.walk order; once per scope and parse."""
    def build() -> dict[str, list[ast.AST]]:
        out: dict[str, list[ast.AST]] = {}
        for n in ast.walk(scope):
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                out.setdefault(n.targets[0].id, []).append(n.value)
        return out
    return src.memo(f"assignments:{id(scope)}", build)


def _calls_by_name(src: _Src) -> dict[str, list[ast.Call]]:
    """Every call in the source by its callee's dotted name, in ast.walk order; once per parse."""
    def build() -> dict[str, list[ast.Call]]:
        out: dict[str, list[ast.Call]] = {}
        for n in ast.walk(src.tree):
            if isinstance(n, ast.Call):
                out.setdefault(_dotted(n.func), []).append(n)
        return out
    return src.memo("calls_by_name", build)


def _resolve_param(src: _Src, func: ast.FunctionDef, param: str, depth: int) -> list[ast.Constant]:
    pos = [a.arg for a in func.args.args]
    out: list[ast.Constant] = []
    defaulted = 0
    calls = _calls_by_name(src).get(func.name, [])
    for call in calls:
        kw = next((k.value for k in call.keywords if k.arg == param), None)
        if kw is None and param in pos and pos.index(param) < len(call.args):
            kw = call.args[pos.index(param)]
        if kw is None:
            defaulted += 1
            continue
        out += _resolve_int(src, kw, call, depth + 1)
    if defaulted or not calls:
        n_def = len(func.args.defaults)
        defaults = dict(zip(pos[len(pos) - n_def:], func.args.defaults))
        defaults.update({a.arg: d for a, d in zip(func.args.kwonlyargs, func.args.kw_defaults) if d is not None})
        if _is_int(defaults.get(param)):
            out.append(defaults[param])  # type: ignore[arg-type]
    return out


def _int_sites(src: _Src, name_ok: Callable[[str], bool]) -> list[_IntSite]:
    """The integer literals set through a parameter whose name passes `name_ok`, one per literal
    (the last parameter naming it wins), in source order."""
    sites: dict[tuple[int, int], _IntSite] = {}
    for name, lit in src.int_literals:
        if name_ok(name):
            sites[src.span(lit)] = _IntSite(name, lit, lit.value)
    return [sites[k] for k in sorted(sites)]


def _pow2_neighbours(v: int, lo: int, hi: int) -> list[int]:
    if v & (v - 1):  # not a power of two: move to the powers around it
        below = 1 << (v.bit_length() - 1)
        cands = [below, below * 2]
    else:
        cands = [v // 2, v * 2]
    return [c for c in cands if lo <= c <= hi and c != v]


def _change_int(src: _Src, op: str, sites: list[_IntSite], rng: random.Random,
                neighbours: Callable[[int], list[int]], what: str) -> tuple[str, str] | MutationRefused:
    options = [(s, n) for s in sites for n in neighbours(s.value)]
    if not options:
        if sites:
            return MutationRefused(op, f"{what} values {[s.value for s in sites]} are at their limits")
        return MutationRefused(op, f"no integer {what} value to change (values computed at run time are left alone)")
    site, new = options[rng.randrange(len(options))]
    a, b = src.span(site.node)
    return src.apply([(a, b, str(new))]), f"{site.name}:{site.value}->{new}"


# --------------------------------------------------------------------------- operators
_BLOCK = re.compile(r"BLOCK|TILE", re.I)
_GRID = re.compile(r"GROUP|ROWS|PER_PROG|SPLIT|CHUNK", re.I)
_UNROLL = re.compile(r"UNROLL", re.I)


def _op_block(src: _Src, rng: random.Random):
    sites = _int_sites(src, lambda n: bool(_BLOCK.search(n)) and not _GRID.search(n))
    return _change_int(src, "block", sites, rng, lambda v: _pow2_neighbours(v, 16, 16384), "BLOCK*/TILE*")


def _op_grid(src: _Src, rng: random.Random):
    sites = _int_sites(src, lambda n: bool(_GRID.search(n)))
    return _change_int(src, "grid", sites, rng, lambda v: _pow2_neighbours(v, 1, 64),
                       "work-per-program (GROUP*/ROWS*/SPLIT*/CHUNK*)")


def _op_launch_option(src: _Src, rng: random.Random, key: str, neighbours: Callable[[int], list[int]],
                      inserts: Sequence[int]):
    options = src.memo(f"launch_option:{key}", lambda: _launch_option_edits(src, key, neighbours, inserts))
    if not options:
        return MutationRefused(key, f"no launch or triton.Config where {key} can change")
    details, edit = options[rng.randrange(len(options))]
    return src.apply([edit]), details


def _launch_option_edits(src: _Src, key: str, neighbours: Callable[[int], list[int]],
                         inserts: Sequence[int]) -> list[tuple[str, tuple[int, int, str]]]:
    sites = _int_sites(src, lambda n: n == key)
    options: list[tuple[str, tuple[int, int, str]]] = []
    for s in sites:
        a, b = src.span(s.node)
        options += [(f"{s.value}->{n}", (a, b, str(n))) for n in neighbours(s.value)]
    for call in _launch_calls(src):
        kernel = _dotted(call.func.value)  # type: ignore[attr-defined]
        if any(k.arg == key or k.arg is None for k in call.keywords) or kernel in src.autotuned:
            continue
        last = max(list(call.args) + list(call.keywords), key=lambda n: src.span(n)[1], default=None)
        if last is None:
            continue
        end = src.span(last)[1]
        options += [(f"add={n}", (end, end, f", {key}={n}")) for n in inserts]
    return options


def _op_num_warps(src: _Src, rng: random.Random):
    return _op_launch_option(src, rng, "num_warps", lambda v: _pow2_neighbours(v, 1, 32), (2, 8))


def _op_num_stages(src: _Src, rng: random.Random):
    return _op_launch_option(src, rng, "num_stages",
                             lambda v: [n for n in (v - 1, v + 1) if 1 <= n <= 6], (1, 2, 4))


def _op_unroll(src: _Src, rng: random.Random):
    options = src.memo("unroll", lambda: _unroll_edits(src))
    if not options:
        return MutationRefused("unroll", "no UNROLL* constexpr and no loop over range/tl.range inside a kernel")
    details, edits = options[rng.randrange(len(options))]
    return src.apply(edits), details


def _unroll_edits(src: _Src) -> list[tuple[str, list[tuple[int, int, str]]]]:
    sites = _int_sites(src, lambda n: bool(_UNROLL.search(n)))
    options: list[tuple[str, list[tuple[int, int, str]]]] = []
    for s in sites:
        a, b = src.span(s.node)
        options += [(f"{s.name}:{s.value}->{n}", [(a, b, str(n))]) for n in _pow2_neighbours(s.value, 1, 16)]
    has_tl = "import triton.language as tl" in src.text
    for loop in (n for n in ast.walk(src.tree) if isinstance(n, ast.For) and src.in_jit(n)):
        it = loop.iter
        if not isinstance(it, ast.Call):
            continue
        fname = _dotted(it.func)
        if fname not in ("range", "tl.range") or (fname == "range" and not has_tl):
            continue
        kw = next((k for k in it.keywords if k.arg == "loop_unroll_factor"), None)
        line = f"line {loop.lineno}"
        if kw is not None:
            if isinstance(kw.value, ast.Constant) and type(kw.value.value) is int:
                a, b = src.span(kw.value)
                v = kw.value.value
                options += [(f"{line}:{v}->{n}", [(a, b, str(n))]) for n in _pow2_neighbours(v, 1, 16)]
            continue
        end = src.span(max(list(it.args) + list(it.keywords), key=lambda n: src.span(n)[1]))[1]
        fa, fb = src.span(it.func)
        for n in (2, 4):
            edits = [(end, end, f", loop_unroll_factor={n}")]
            if fname == "range":
                edits.append((fa, fb, "tl.range"))
            options.append((f"{line}:add={n}", edits))
    return options


_DTYPES = ("tl.float32", "tl.float16", "tl.bfloat16")


def _op_acc_dtype(src: _Src, rng: random.Random):
    sites = src.memo("acc_dtype", lambda: _acc_dtype_sites(src))
    if not sites:
        return MutationRefused("acc_dtype", "no tl.float32/float16/bfloat16 accumulator or cast inside a kernel")
    site = sites[rng.randrange(len(sites))]
    old = _dotted(site)
    new = rng.choice(_DTYPES[1:]) if old == "tl.float32" else "tl.float32"
    a, b = src.span(site)
    return src.apply([(a, b, new)]), f"line {site.lineno}:{old[3:]}->{new[3:]}"


def _acc_dtype_sites(src: _Src) -> list[ast.Attribute]:
    sites: list[ast.Attribute] = []
    for call in (n for n in ast.walk(src.tree) if isinstance(n, ast.Call) and src.in_jit(n)):
        fname = _dotted(call.func)
        vals: list[ast.AST] = []
        if fname in ("tl.zeros", "tl.full"):
            vals = [k.value for k in call.keywords if k.arg == "dtype"]
            vals += call.args[2:3] if fname == "tl.full" else call.args[1:2]
        elif isinstance(call.func, ast.Attribute) and call.func.attr == "to":
            vals = call.args[:1] + [k.value for k in call.keywords if k.arg == "dtype"]
        sites += [v for v in vals if isinstance(v, ast.Attribute) and _dotted(v) in _DTYPES]
    return sites


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _op_swap_order(src: _Src, rng: random.Random):
    options = src.memo("swap_order", lambda: _swap_order_edits(src))
    if not options:
        return MutationRefused("swap_order", "no adjacent independent tl.load pair and no commutative +/* "
                               "of two simple operands inside a kernel")
    details, edits = options[rng.randrange(len(options))]
    return src.apply(edits), details


def _swap_order_edits(src: _Src) -> list[tuple[str, list[tuple[int, int, str]]]]:
    options: list[tuple[str, list[tuple[int, int, str]]]] = []
    for f in src.jit_funcs:
        for block in (n for n in ast.walk(f) if hasattr(n, "body") and isinstance(getattr(n, "body"), list)):
            body = block.body
            for s1, s2 in zip(body, body[1:]):
                if not all(isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
                           and isinstance(s.value, ast.Call) and _dotted(s.value.func) == "tl.load"
                           for s in (s1, s2)):
                    continue
                t1, t2 = s1.targets[0].id, s2.targets[0].id  # type: ignore[attr-defined]
                if t1 == t2 or t1 in _names(s2.value) or t2 in _names(s1.value):
                    continue
                a1, b1 = src.span(s1)
                a2, b2 = src.span(s2)
                options.append((f"loads:{t1}<->{t2}", [(a1, b1, src.segment(s2)), (a2, b2, src.segment(s1))]))
        for op in (n for n in ast.walk(f) if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Mult))):
            if all(isinstance(x, (ast.Name, ast.Attribute, ast.Constant)) for x in (op.left, op.right)):
                la, lb = src.span(op.left)
                ra, rb = src.span(op.right)
                if src.segment(op.left) == src.segment(op.right):
                    continue
                sym = "+" if isinstance(op.op, ast.Add) else "*"
                options.append((f"line {op.lineno}:{src.segment(op.left)}{sym}{src.segment(op.right)}",
                                [(la, lb, src.segment(op.right)), (ra, rb, src.segment(op.left))]))
    return options


#: The fp32 dot precisions `dot_precision` moves between (each to the other).
_DOT_PRECISIONS = {"ieee": "tf32x3", "tf32x3": "ieee"}


def _dot_precision_sites(src: _Src) -> dict[str, list[ast.Constant]]:
    """Per kernel (name), the string constants of its `tl.dot(..., input_precision=...)` calls
    that `dot_precision` can switch."""
    out: dict[str, list[ast.Constant]] = {}
    for f in src.jit_funcs:
        for call in (n for n in ast.walk(f) if isinstance(n, ast.Call) and _dotted(n.func) == "tl.dot"):
            for k in call.keywords:
                if (k.arg == "input_precision" and isinstance(k.value, ast.Constant)
                        and k.value.value in _DOT_PRECISIONS):
                    out.setdefault(f.name, []).append(k.value)
    return out


def _op_dot_precision(src: _Src, rng: random.Random):
    sites = src.memo("dot_precision", lambda: _dot_precision_sites(src))
    if not sites:
        return MutationRefused("dot_precision", 'no tl.dot with input_precision="ieee" or "tf32x3" in a kernel')
    kernel = sorted(sites)[rng.randrange(len(sites))]
    consts = sites[kernel]
    old = consts[0].value
    new = _DOT_PRECISIONS[old]
    edits = [(*src.span(c), f'"{new}"') for c in consts if c.value == old]
    return src.apply(edits), f"{kernel}:{old}->{new}"


_OPS: dict[str, Callable[[_Src, random.Random], tuple[str, str] | MutationRefused]] = {
    "block": _op_block, "num_warps": _op_num_warps, "num_stages": _op_num_stages, "grid": _op_grid,
    "unroll": _op_unroll, "acc_dtype": _op_acc_dtype, "swap_order": _op_swap_order,
    "dot_precision": _op_dot_precision,
}


# --------------------------------------------------------------------------- public API
@functools.lru_cache(maxsize=256)
def _parsed(source: str) -> _Src:
    """The parse of a source, shared by the operators applied to it (a parent is mutated many
    times in a neighbourhood). Raises SyntaxError (not cached) when it does not parse."""
    return _Src(source)


@functools.lru_cache(maxsize=1024)
def validate_source(source: str) -> str | None:
    """None when `source` parses, compiles and defines a top-level ModelNew; else the reason."""
    try:
        tree = ast.parse(source)
        compile(tree, "<candidate>", "exec")
    except SyntaxError as e:
        return f"syntax error at line {e.lineno}: {e.msg}"
    if not any(isinstance(n, ast.ClassDef) and n.name == "ModelNew" for n in tree.body):
        return "no top-level class ModelNew"
    return None


def mutate_source(source: str, op: str, rng: random.Random, *, by_id: bool = True) -> tuple[str, str] | MutationRefused:
    """Apply operator `op` to a source: (new source, details) or MutationRefused.

    An edit that leaves the source as it was is refused; `by_id` (the default) refuses one
    that leaves its content id as it was too (only comments or blank lines changed)."""
    if op not in _OPS:
        raise ValueError(f"unknown mutation operator {op!r}; choose from {', '.join(OPS)}")
    try:
        src = _parsed(source)
    except SyntaxError as e:
        return MutationRefused(op, f"the parent does not parse (line {e.lineno}: {e.msg})")
    out = _OPS[op](src, rng)
    if isinstance(out, MutationRefused):
        return out
    new_source, details = out
    problem = validate_source(new_source)
    if problem:
        return MutationRefused(op, f"the edit {details} gave an invalid source ({problem}); not applied")
    if new_source == source or (by_id and candidate_id(new_source) == candidate_id(source)):
        return MutationRefused(op, f"the edit {details} does not change the normalised source")
    return new_source, details


def mutate(candidate: Candidate, op: str, rng: random.Random) -> Candidate | MutationRefused:
    """One child of `candidate` by operator `op` (see the module docstring for the operators).

    The child has parent_id = candidate.id, generation + 1 and origin "mutation:<op>:<details>".
    """
    out = mutate_source(candidate.source, op, rng)
    if isinstance(out, MutationRefused):
        return out
    new_source, details = out
    return Candidate.from_source(candidate.problem_id, new_source, backend=candidate.backend,
                                 parent_id=candidate.id, generation=candidate.generation + 1,
                                 origin=f"mutation:{op}:{details}")


def applicable_ops(candidate: Candidate, ops: Iterable[str] = OPS) -> list[str]:
    """The operators that give `candidate` a valid, changed source (tried with a fixed RNG; an
    edit of code, which is what every operator makes, changes the content id as well)."""
    return list(_applicable(candidate.source, tuple(ops)))


@functools.lru_cache(maxsize=256)
def _applicable(source: str, ops: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(op for op in ops
                 if not isinstance(mutate_source(source, op, random.Random(0), by_id=False), MutationRefused))


def neighbourhood(candidate: Candidate, n: int, seed: int, ops: Sequence[str] = OPS,
                  max_depth: int = 3, exclude: Iterable[str] = ()) -> list[Candidate]:
    """Up to `n` distinct children of `candidate` (ids differ from it, from each other and from
    `exclude`), deterministic in `seed`.

    Single mutations come first; when they run out, chains of up to `max_depth` operators are
    applied (origin "mutation:<op>:<d>+<op>:<d>"). Fewer than `n` come back only when the
    source offers no more distinct edits.
    """
    rng = random.Random(seed)
    ops = [op for op in ops if op in applicable_ops(candidate, ops)]
    seen = {candidate.id, *exclude}
    out: list[Candidate] = []
    if not ops or n <= 0:
        return out
    attempts = 0
    while len(out) < n and attempts < 30 * n + 60:
        depth = 1 if attempts < 6 * n + 10 else rng.randint(2, max_depth)
        attempts += 1
        source, parts = candidate.source, []
        for _ in range(depth):
            op = rng.choice(ops)
            res = mutate_source(source, op, rng)
            if isinstance(res, MutationRefused):
                continue
            source, details = res
            parts.append(f"{op}:{details}")
        if not parts:
            continue
        cid = candidate_id(source)
        if cid in seen:
            continue
        seen.add(cid)
        out.append(Candidate.from_source(candidate.problem_id, source, backend=candidate.backend,
                                         parent_id=candidate.id, generation=candidate.generation + 1,
                                         origin="mutation:" + "+".join(parts)))
    return out

