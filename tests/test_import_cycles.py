"""The workbench package's import graph has no cycles (read with `ast`, nothing imported).

Imports at module level and imports inside functions are read separately; neither graph, nor
the two together, may hold a cycle (an import moved into a function hides a cycle from the
interpreter, not from the design). Imports under `if TYPE_CHECKING:` are read too: a module that
needs another's type to describe itself depends on it, so no cycle may hide there either.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "workbench"

def _modules() -> dict[str, Path]:
    mods = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods


def _targets(mod: str, is_pkg: bool, node: ast.Import | ast.ImportFrom, mods: dict) -> set[str]:
    names = []
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = node.module or ""
        if node.level:
            pkg = mod.split(".") if is_pkg else mod.split(".")[:-1]
            pkg = pkg[:len(pkg) - (node.level - 1)]
            base = ".".join(pkg + ([base] if base else []))
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
    out = set()
    for name in names:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        if name and name != mod:
            out.add(name)
    return out


def import_graph(typing_only: bool = False) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(module-level edges, function-level edges) between workbench modules; with
    `typing_only`, (imports under `if TYPE_CHECKING:`, nothing) instead."""
    mods = _modules()
    top: dict[str, set[str]] = {m: set() for m in mods}
    inner: dict[str, set[str]] = {m: set() for m in mods}
    typing: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        is_pkg = path.name == "__init__.py"

        def walk(node: ast.AST, in_function: bool, for_typing: bool) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    graph = typing if for_typing else (inner if in_function else top)
                    graph[mod] |= _targets(mod, is_pkg, child, mods)
                elif isinstance(child, ast.If) and getattr(child.test, "id", "") == "TYPE_CHECKING":
                    walk(child, in_function, True)  # typing-only imports: never run, still a dependency
                else:
                    walk(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)),
                         for_typing)

        walk(ast.parse(path.read_text(), filename=str(path)), False, False)
    return (typing, {m: set() for m in mods}) if typing_only else (top, inner)


def cycles(graph: dict[str, set[str]]) -> set[tuple[str, ...]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[tuple[str, ...]] = set()
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.add(tuple(sorted(comp)))
    return found


def test_cycle_finder_finds_a_cycle():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(g) == {("a", "b", "c")}
    assert cycles({"a": {"b"}, "b": set()}) == set()


def test_module_level_imports_have_no_cycles():
    top, _ = import_graph()
    assert len(top) > 100 and top["workbench.store.sqlite"], "the graph was not read"
    assert cycles(top) == set()


def test_function_level_imports_add_no_cycles():
    top, inner = import_graph()
    assert any(inner.values()), "the function-level imports were not read"
    both = {m: top[m] | inner[m] for m in top}
    assert cycles(both) == set()


def test_typing_only_imports_add_no_cycles():
    """forecast/learned/adapted.py once imported forecaster.py for a type hint while forecaster.py
    imported it: a cycle the interpreter never ran and the design still had."""
    top, inner = import_graph()
    typing, _ = import_graph(typing_only=True)
    assert any(typing.values()), "the TYPE_CHECKING imports were not read"
    every = {m: top[m] | inner[m] | typing[m] for m in top}
    assert cycles(every) == set()
    assert "workbench.forecast.learned.forecaster" not in every["workbench.forecast.learned.adapted"]
