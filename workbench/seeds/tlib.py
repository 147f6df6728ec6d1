"""The Triton library embedded in generic seeds (`generic.py`): one kernel per op family, every
size, dim and flag read at run time, so a seed written with it runs at any size.

`SOURCE` is the library's text (a `string.Template`: `$name` tile sizes) and `render(profile)`
fills it for a GPU or for Triton's interpreter (the CPU path, where a program's cost is mostly
Python overhead and a few large tiles run far faster than many small ones). Tests render it and
check every entry against PyTorch.

Entry points (all arithmetic in fp32, results in the op's dtype; each raises `_Unsupported`
for an argument it does not handle, so a seed fails loudly instead of falling back to PyTorch):
  _t_unary(op, x, p0, p1)       relu, gelu, sigmoid, ... (`UNARY`), p0 / p1 its parameters
  _t_binary(op, a, b)           add, sub, mul, div, pow, maximum, minimum, comparisons; tensors of
                                broadcastable shapes (up to 6 dims) or a tensor and a number
  _t_where(c, a, b)             torch.where / masked_fill
  _t_reduce(op, x, dim, keepdim)  sum, mean, amax, amin, prod, norm2, norm1, norminf, argmax,
                                argmin, max_dim, min_dim over any dims
  _t_softmax(x, dim, log)       softmax / log-softmax over any dim
  _t_scan(x, dim, prod)         cumsum / cumprod over any dim
  _t_matmul(a, b) / _t_linear(x, w, b)   2-D, batched, broadcast, matrix-vector
  _t_conv(x, w, b, stride, padding, dilation, groups, transposed, output_padding)
  _t_pool(x, d, kernel, stride, padding, dilation, ceil_mode, is_max, count_pad, divisor, adaptive)
  _t_norm(kind, x, w, b, eps, ndims, groups)   layer / rms / group / instance
  _t_batchnorm(x, mean, var, w, b, eps)
  _t_rows(kind, a, b, c, t, p1, p2)   per-row cross entropy, cosine similarity, distances, triplet
  _t_sum(x, denom)              sum of all elements / denom
  _t_rnn(mode, x, hx, weights, layers, dirs, batch_first, hidden)   RNN / LSTM / GRU, and cells
"""
from __future__ import annotations

import ast
import re
import string
from typing import Iterable

from workbench.seeds.tlib_core import CORE
from workbench.seeds.tlib_dispatch import DISPATCH
from workbench.seeds.tlib_nn import NN

_NP2 = "triton.next_power_of_2"
#: Launch sizes: literals on a GPU (the search's mutation operators tune them); in the interpreter
#: expressions of the sizes, so a small dimension does not pay for a large masked tile.
TILES = {
    "gpu": {"EW": "1024", "BM": "64", "BN": "64", "BK": "32", "ROWS": "4", "RBLOCK": "1024", "CR": "64",
            "CI": "16", "NROWS": "1", "NBLOCK": "1024", "CONV_BM": "64", "CONV_BN": "64", "CONV_BK": "32",
            "POOL": "256", "RNN_B": "16", "RNN_H": "64", "RNN_K": "32", "SUMB": "1024", "MV_R": "4",
            "MV_K": "1024"},
    "interpreter": {
        "EW": f"min(262144, max(16, {_NP2}(n)))", "BM": f"min(256, max(16, {_NP2}(M)))",
        "BN": f"min(256, max(16, {_NP2}(N)))",
        "BK": f"min(256, max(16, {_NP2}(K)))", "RBLOCK": f"min(16384, {_NP2}(R))",
        "ROWS": f"max(1, min(1024, 262144 // min(16384, {_NP2}(R))))", "CR": f"min(1024, {_NP2}(R))",
        "CI": f"min(256, {_NP2}(inner))", "NBLOCK": f"min(16384, {_NP2}(n_cols))",
        "NROWS": f"max(1, min(1024, 262144 // min(16384, {_NP2}(n_cols))))",
        "CONV_BM": f"min(4096, max(16, {_NP2}(M)))", "CONV_BN": f"min(128, max(16, {_NP2}(OCG)))",
        "CONV_BK": f"min(256, max(16, {_NP2}(KTOT)))", "POOL": f"min(262144, max(16, {_NP2}(total)))",
        "RNN_B": "128", "RNN_H": "256",
        "RNN_K": f"min(256, max(16, {_NP2}(H)))", "SUMB": f"min(262144, max(16, {_NP2}(n)))",
        "MV_R": f"min(256, {_NP2}(R))", "MV_K": f"min(1024, {_NP2}(K))"},
}

UNARY = ("relu", "relu6", "leaky_relu", "elu", "celu", "selu", "gelu", "gelu_tanh", "silu", "mish", "sigmoid",
         "logsigmoid", "tanh", "hardtanh", "hardsigmoid", "hardswish", "softplus", "softsign", "tanhshrink", "exp",
         "log", "log2", "log1p", "expm1", "abs", "neg", "sqrt", "rsqrt", "reciprocal", "square", "sin", "cos",
         "erf", "floor", "ceil", "sign", "clamp", "clamp_min", "clamp_max", "logical_not", "identity", "powc")
BINARY = ("add", "sub", "mul", "div", "pow", "maximum", "minimum", "gt", "lt", "ge", "le", "eq", "ne",
          "logical_and", "logical_or", "rsub", "xlogy", "smooth_l1", "huber", "kl", "bce", "sqdiff", "absdiff")


def render(profile: str = "gpu") -> str:
    """The library's source for `profile` ("gpu" or "interpreter")."""
    return string.Template(SOURCE).substitute(TILES[profile])


#: The library's text: kernels and their launchers (`tlib_core`, `tlib_nn`).
SOURCE = CORE + NN



def render_all(profile: str = "gpu") -> str:
    """The kernels and the dispatch layer for `profile`."""
    return render(profile) + DISPATCH


#: The library's dispatchers and the argument their branches select on: a branch whose test can
#: only hold for names the seed never passes is dead code in that seed.
_SELECTORS = {"_t_fn": "name", "_t_op": "name", "_t_iop": "name", "_t_leaf": "kind", "_loss": "name"}
#: Dispatchers that pass their selector on to another and so see the same names.
_SAME_NAMES = {"_t_iop": "_t_op", "_loss": "_t_fn"}


def _const_keys(node: ast.AST) -> set[str] | None:
    """The string constants of a tuple / list / set literal or a dict literal's keys, else None."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        elts = node.elts
    elif isinstance(node, ast.Dict):
        elts = node.keys
    else:
        return None
    if not all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in elts):
        return None
    return {e.value for e in elts}


def _may_hold(test: ast.AST, var: str, names: set[str], tables: dict[str, set[str]]) -> bool:
    """Whether `test` may be true when `var` is one of `names` (True whenever it cannot tell)."""
    if isinstance(test, ast.BoolOp):
        parts = [_may_hold(v, var, names, tables) for v in test.values]
        return any(parts) if isinstance(test.op, ast.Or) else all(parts)
    if (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name)
            and test.left.id == var):
        op, right = test.ops[0], test.comparators[0]
        if isinstance(op, ast.Eq) and isinstance(right, ast.Constant):
            return right.value in names
        if isinstance(op, ast.In):
            keys = tables.get(right.id) if isinstance(right, ast.Name) else _const_keys(right)
            if keys is not None:
                return bool(keys & names)
    return True


def _walk_except(node: ast.AST, skip: set[int]):
    """ast.walk without the subtrees whose id() is in `skip`."""
    todo = [node]
    while todo:
        n = todo.pop()
        if id(n) in skip:
            continue
        yield n
        todo.extend(ast.iter_child_nodes(n))


def _names_used(node: ast.AST, skip: set[int] = frozenset()) -> set[str]:
    """The names `node` reads or writes, outside the subtrees in `skip`."""
    return {n.id for n in _walk_except(node, skip) if isinstance(n, ast.Name)}


#: Methods that change a dict, list or set in place.
_CHANGING = {"update", "append", "extend", "add", "setdefault", "pop", "popitem", "clear", "remove", "insert",
             "discard", "sort", "reverse", "__setitem__", "__delitem__", "__ior__"}


def _const_tables(tree: ast.AST) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Names assigned once in `tree`, a literal of string constants, and never changed after
    (no item assigned, no method called on them): their keys (a dict's, or a tuple's / list's /
    set's elements) and, for a dict of strings to strings, their values."""
    keys: dict[str, set[str]] = {}
    values: dict[str, set[str]] = {}
    assigned: dict[str, int] = {}
    changed: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        assigned[n.id] = assigned.get(n.id, 0) + (1 if n is t else 2)
                    elif isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name):
                        changed.add(n.value.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr in _CHANGING:
            changed.add(node.value.id)
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        name, got = node.targets[0].id, _const_keys(node.value)
        if got is not None:
            keys[name] = got
            if isinstance(node.value, ast.Dict):
                vals = _const_keys(ast.Tuple(elts=list(node.value.values)))
                if vals is not None:
                    values[name] = vals
    fixed = {n for n, k in assigned.items() if k == 1 and n not in changed}
    return ({n: v for n, v in keys.items() if n in fixed}, {n: v for n, v in values.items() if n in fixed})


def _names_seen(trees: list[ast.AST], lib: ast.AST, skip: set[int],
                values: dict[str, set[str]]) -> dict[str, set[str] | None]:
    """The op names each dispatcher may be passed (see prune), from the calls outside `skip`:
    a string constant, a dispatcher's own selector passed on within the library, or an item of
    a dict of strings (`_loss(losses[kind], ...)`: any of its values); anything else, unknown."""
    seen: dict[str, set[str] | None] = {fn: set() for fn in _SELECTORS if fn not in _SAME_NAMES}
    for tree in trees:
        for call in (n for n in _walk_except(tree, skip) if isinstance(n, ast.Call)):
            fn = call.func.id if isinstance(call.func, ast.Name) else None
            if fn not in _SELECTORS or fn == "_t_leaf":
                continue
            key = _SAME_NAMES.get(fn, fn)
            first = call.args[0] if call.args else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                if seen[key] is not None:
                    seen[key].add(first.value)
            elif (isinstance(first, ast.Subscript) and isinstance(first.value, ast.Name)
                  and first.value.id in values):
                if seen[key] is not None:
                    seen[key] |= values[first.value.id]
            elif not (isinstance(first, ast.Name) and first.id == _SELECTORS[fn] and tree is lib):
                seen[key] = None
    return seen


def prune(library: str, uses: str, kinds: Iterable[str] = ()) -> str:
    """`library` (render_all's text) with what code `uses` (the rest of a seed) cannot reach
    taken out, the rest unchanged line for line: each dispatcher's branches (`_SELECTORS`) for
    op names and module `kinds` the seed never passes, then every top-level definition no kept
    code names. An op name is known only from a dispatcher call with a string constant first
    (or its own selector passed on) in code that is kept; a dispatcher called any other way
    keeps every branch, and a test the rule cannot read keeps its branch. `kinds`: the class
    names of the modules the seed's model holds (`_t_mod` dispatches on them at run time)."""
    lib, user = ast.parse(library), ast.parse(uses)
    defs: dict[str, ast.stmt] = {}
    for node in lib.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defs[node.name] = node
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            defs[node.targets[0].id] = node
    tables, values = _const_tables(lib)
    leaf_kinds = set(kinds) | _names_used(user) | {n.attr for n in ast.walk(user) if isinstance(n, ast.Attribute)}

    def dead(seen: dict[str, set[str] | None]) -> dict[int, ast.If]:
        out: dict[int, ast.If] = {}
        for fn, var in _SELECTORS.items():
            node = defs.get(fn)
            names = leaf_kinds if fn == "_t_leaf" else seen.get(_SAME_NAMES.get(fn, fn))
            if names is None or not isinstance(node, ast.FunctionDef):
                continue
            for stmt in node.body[:-1]:          # the last statement is the fall-through
                if isinstance(stmt, ast.If) and not stmt.orelse and not _may_hold(stmt.test, var, names, tables):
                    out[id(stmt)] = stmt
        return out

    # From the names the seed itself passes, then those of the library's calls in branches
    # still kept, until the branches taken out no longer change (they only shrink).
    removed = dead(_names_seen([user], lib, set(), values))
    while True:
        again = dead(_names_seen([user, lib], lib, set(removed), values))
        if again.keys() == removed.keys():
            break
        removed = {k: v for k, v in removed.items() if k in again}
    dead_lines = [(stmt.lineno, stmt.end_lineno) for stmt in removed.values()]
    # What the kept code reaches: names used by the seed and by the library's top-level
    # statements that define nothing, then by every definition reached, to a fixed point.
    skip = set(removed)
    reach = _names_used(user)
    for node in lib.body:
        if node not in defs.values():
            reach |= _names_used(node)
    todo = [n for n in reach if n in defs]
    while todo:
        for n in _names_used(defs[todo.pop()], skip) - reach:
            reach.add(n)
            if n in defs:
                todo.append(n)
    for name, node in defs.items():
        if name not in reach:
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            dead_lines.append((first, node.end_lineno))
    if not dead_lines:
        return library
    drop = set()
    for a, b in dead_lines:
        drop.update(range(a, b + 1))
    kept = [ln for i, ln in enumerate(library.split("\n"), start=1) if i not in drop]
    out = re.sub(r"\n{4,}", "\n\n\n", "\n".join(kept))
    compile(out, "<pruned library>", "exec")     # a line range that was not a whole statement fails here
    return out
