"""The search space of any seed: its kernels' launch parameters as a kernel `Family`.

Every seed kind launches its kernels with literal tile sizes, warps and stages (Inductor's
autotuned config, the family templates' and the generic library's defaults: see their modules).
`seed_family(candidate)` reads those launch sites (`kernel[grid](..., XBLOCK=1024, num_warps=4)`
outside `@triton.jit` functions) and makes each one a parameter of a `workbench.families.Family`
whose points render the seed with other values at those sites, so what works on the kernel
families (enumerating points, neighbourhoods, `Space.from_family` and a forecaster's screen in
the space search, Triton autotune maps) works on a new problem's seed:

- a tile parameter (a name with BLOCK or TILE, as the mutation operators read it) takes the
  powers of two from a quarter to four times its value (from 16 for `tl.dot` operands:
  BLOCK_M / BLOCK_N / BLOCK_K), at most `MAX_BLOCK`;
- `num_warps` the powers of two from 1 to 16 around its value, `num_stages` 1 to 4;
- with `tf32=True` (a run whose tolerance admits TF32 products), a `TF32=False` / `True` launch
  flag becomes a parameter too;
- a point is valid when each kernel's tile (the product of its tile parameters) holds at most
  `MAX_TILE` elements.

A seed with more sites than `max_params` keeps the first ones in source order as parameters
and its others at their values (the space stays enumerable); `max_points` bounds the product of
the value counts the same way. The family's point with the seed's own values (returned beside it)
renders the seed's kernels exactly (only the family's header docstring is added).
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from workbench.families.base import Family, FamilyError, Param
from workbench.records import Candidate

MAX_BLOCK = 16384
MAX_TILE = 2**17
_BLOCK = re.compile(r"BLOCK|TILE", re.I)
_DOT_OPERANDS = ("BLOCK_M", "BLOCK_N", "BLOCK_K")


@dataclass(frozen=True)
class Site:
    """One literal launch argument: the kernel launched, the keyword, its value and byte span."""

    kernel: str
    keyword: str
    value: Any
    start: int
    end: int

    @property
    def name(self) -> str:
        return f"{self.kernel}.{self.keyword}"


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return _dotted(node.value) + "." + node.attr
    return ""


def launch_sites(source: str, tf32: bool = False) -> list[Site]:
    """The tunable literal launch arguments of `source`, in source order."""
    tree = ast.parse(source)
    jit = {n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
           and any(_dotted(d.func if isinstance(d, ast.Call) else d).endswith(("jit", "autotune"))
                   for d in n.decorator_list)}
    inside = set()
    for fn in jit:
        inside |= set(ast.walk(fn))
    starts = [0]
    for line in source.encode().splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    sites: list[Site] = []
    seen: dict[str, int] = {}
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Subscript)) or call in inside:
            continue
        kernel = _dotted(call.func.value) or "kernel"
        for kw in call.keywords:
            v = kw.value
            if not isinstance(v, ast.Constant) or kw.arg is None:
                continue
            tunable = (type(v.value) is int and v.value > 0 and (_BLOCK.search(kw.arg) or kw.arg in ("num_warps",
                                                                                                     "num_stages")))
            tunable = tunable or (tf32 and kw.arg == "TF32" and type(v.value) is bool)
            if not tunable:
                continue
            a = starts[v.lineno - 1] + v.col_offset
            b = starts[v.end_lineno - 1] + v.end_col_offset
            label = kernel if kernel not in seen else f"{kernel}#{seen[kernel]}"
            sites.append(Site(label, kw.arg, v.value, a, b))
        seen[kernel] = seen.get(kernel, 0) + 1
    return sorted(sites, key=lambda s: s.start)


def _values(site: Site) -> tuple:
    v = site.value
    if site.keyword == "TF32":
        return (False, True)
    if site.keyword == "num_warps":
        return tuple(w for w in (1, 2, 4, 8, 16) if v // 2 <= w <= v * 2 or w == v)
    if site.keyword == "num_stages":
        return tuple(sorted({1, 2, 3, 4} | {v}))
    low = 16 if site.keyword in _DOT_OPERANDS else 1
    out = {v}
    for f in (0.25, 0.5, 2, 4):
        w = int(v * f)
        if w >= low and w <= MAX_BLOCK and w & (w - 1) == 0:
            out.add(w)
    return tuple(sorted(out))


def seed_family(candidate: Candidate, tf32: bool = False, max_params: int = 6,
                max_points: int = 4096) -> tuple[Family, tuple]:
    """The Family of `candidate`'s launch parameters (see the module doc) and the point of the
    seed's own values; FamilyError when it launches nothing tunable."""
    source = candidate.source
    sites = launch_sites(source, tf32)
    params: list[Param] = []
    chosen: list[Site] = []
    size = 1
    for s in sites:
        vals = _values(s)
        if len(chosen) >= max_params or size * len(vals) > max_points or len(vals) < 2:
            continue
        chosen.append(s)
        params.append(Param(s.name, vals, f"{s.keyword} of {s.kernel} (seed value {s.value})"))
        size *= len(vals)
    if not chosen:
        raise FamilyError(f"{candidate.id}: no literal launch parameter to tune")
    data = source.encode()

    def render(d: dict[str, Any]) -> str:
        out = data
        for s in sorted(chosen, key=lambda s: s.start, reverse=True):
            out = out[:s.start] + repr(d[s.name]).encode() + out[s.end:]
        return out.decode()

    def check(d: dict[str, Any]) -> str | None:
        tiles: dict[str, int] = {}
        for s in chosen:
            if _BLOCK.search(s.keyword):
                tiles[s.kernel] = tiles.get(s.kernel, 1) * int(d[s.name])
        big = [k for k, t in tiles.items() if t > MAX_TILE]
        return f"the tile of {big[0]} holds more than {MAX_TILE} elements" if big else None

    family = Family(name=f"seed:{candidate.id}", kind="seed", problem_id=candidate.problem_id, params=tuple(params),
                    render_fn=render, check_fn=check, doc=f"Seed {candidate.origin}")
    return family, tuple(s.value for s in chosen)
