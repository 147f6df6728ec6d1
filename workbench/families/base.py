"""Kernel families: a parametric Triton template plus the table of its parameters.

A `Family` belongs to one problem. Its parameters (`Param`) each take one of a fixed tuple of
values; a *point* is one value per parameter, in parameter order. `Family.points()` enumerates
every valid point (the product of the value tuples filtered by the family's constraint, in
lexicographic order of value indices), `Family.render(point)` turns a point into a
self-contained candidate source (imports, `@triton.jit` kernels, launcher, `ModelNew`), and
`Family.candidate(point)` wraps it in a `Candidate` whose id is the usual content hash and whose
origin is `family:<family name>:<point key>`.

Invariants: rendering is a pure function of (family, point): the same point renders the same
bytes in any process, and two different points of one family never render the same source
(a parameter that does not apply to a point's algorithm is pinned to one value by the
constraint, so no duplicate is enumerated). A point key (`algo=online,block=1024,...`) names a
point uniquely and `Family.parse_key` reads it back.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

from workbench.errors import WorkbenchError
from workbench.records import Candidate

#: Shared memory a Triton program may use on the GPUs the study targets (H100/H200: 227 KiB).
SMEM_LIMIT_BYTES = 227 * 1024
#: Values one thread may hold in registers for a tile (a looser bound spills, a tighter one
#: would rule out real configurations); used by the families' constraints.
MAX_VALUES_PER_THREAD = 256

Point = tuple  # one value per parameter, in the family's parameter order


class FamilyError(WorkbenchError):
    """A family, point or key is unknown or invalid."""


@dataclass(frozen=True)
class Param:
    """One design choice: its name, the values it takes (in order) and what it means."""

    name: str
    values: tuple
    doc: str = ""

    def __post_init__(self) -> None:
        if not self.values or len(set(self.values)) != len(self.values):
            raise FamilyError(f"parameter {self.name!r} needs distinct values, got {self.values!r}")


@dataclass(frozen=True)
class Family:
    """A parametric template for one problem.

    `render_fn(params: dict) -> str` writes the source; `check_fn(params: dict) -> str | None`
    returns why a combination is invalid (None when valid); `kind` names the template
    ("softmax", "matmul", ...) shared by the families of several problems.
    """

    name: str
    kind: str
    problem_id: str
    params: tuple[Param, ...]
    render_fn: Callable[[dict[str, Any]], str] = field(repr=False, compare=False)
    check_fn: Callable[[dict[str, Any]], str | None] = field(repr=False, compare=False)
    doc: str = ""

    # ------------------------------------------------------------------ points
    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    def as_dict(self, point: Sequence) -> dict[str, Any]:
        if len(point) != len(self.params):
            raise FamilyError(f"{self.name}: a point has {len(self.params)} values "
                              f"({', '.join(self.param_names)}), got {len(point)}")
        return dict(zip(self.param_names, point))

    def point(self, **values: Any) -> Point:
        """The point with these values (every parameter named); FamilyError when invalid."""
        missing = [n for n in self.param_names if n not in values]
        extra = [n for n in values if n not in self.param_names]
        if missing or extra:
            raise FamilyError(f"{self.name}: missing {missing}, unknown {extra}; parameters are "
                              f"{', '.join(self.param_names)}")
        pt = tuple(values[n] for n in self.param_names)
        why = self.invalid(pt)
        if why:
            raise FamilyError(f"{self.name}: point {self.key(pt)} is invalid: {why}")
        return pt

    def invalid(self, point: Sequence) -> str | None:
        """Why `point` is not a valid point of the family (None when it is)."""
        d = self.as_dict(point)
        for p in self.params:
            if d[p.name] not in p.values:
                return f"{p.name}={d[p.name]!r} is not one of {p.values!r}"
        return self.check_fn(d)

    def _all(self) -> Iterator[Point]:
        return itertools.product(*(p.values for p in self.params))

    def points(self) -> list[Point]:
        """Every valid point, in lexicographic order of the parameters' value indices."""
        return [pt for pt in self._all() if self.check_fn(self.as_dict(pt)) is None]

    def size(self) -> int:
        return len(self.points())

    def restricted(self, **values: Sequence) -> "Family":
        """The same template over a subset of the named parameters' values (in the family's
        order). Its points render exactly as the same points of the full family (a small
        landscape for tests is a slice of the real one)."""
        params = []
        for p in self.params:
            keep = values.pop(p.name, None)
            if keep is None:
                params.append(p)
                continue
            bad = [v for v in keep if v not in p.values]
            if bad:
                raise FamilyError(f"{self.name}: {p.name} has no values {bad}; it takes {p.values}")
            params.append(Param(p.name, tuple(v for v in p.values if v in set(keep)), p.doc))
        if values:
            raise FamilyError(f"{self.name}: unknown parameters {sorted(values)}")
        return Family(self.name, self.kind, self.problem_id, tuple(params), self.render_fn, self.check_fn, self.doc)

    # ------------------------------------------------------------------ keys
    def key(self, point: Sequence) -> str:
        """`name=value,...` in parameter order: a point's stable, readable name."""
        return ",".join(f"{n}={_fmt(v)}" for n, v in zip(self.param_names, point))

    def parse_key(self, key: str) -> Point:
        """The point a `key` names; FamilyError for an unknown name or value."""
        parts = dict(kv.split("=", 1) for kv in key.split(",") if "=" in kv)
        out = []
        for p in self.params:
            if p.name not in parts:
                raise FamilyError(f"{self.name}: key {key!r} lacks {p.name}")
            by_text = {_fmt(v): v for v in p.values}
            if parts[p.name] not in by_text:
                raise FamilyError(f"{self.name}: {p.name}={parts[p.name]} is not one of "
                                  f"{', '.join(by_text)}")
            out.append(by_text[parts[p.name]])
        if len(parts) != len(self.params):
            raise FamilyError(f"{self.name}: key {key!r} names unknown parameters")
        return tuple(out)

    # ------------------------------------------------------------------ rendering
    def render(self, point: Sequence) -> str:
        """The candidate source of a valid point (FamilyError for an invalid one)."""
        why = self.invalid(point)
        if why:
            raise FamilyError(f"{self.name}: cannot render {self.key(point)}: {why}")
        header = (f'"""{self.doc or self.kind} for {self.problem_id}, rendered from the '
                  f'workbench family {self.name!r}.\n\nPoint: {self.key(point)}\n"""\n')
        return header + self.render_fn(self.as_dict(point)).strip("\n") + "\n"

    def origin(self, point: Sequence) -> str:
        return f"family:{self.name}:{self.key(point)}"

    def candidate(self, point: Sequence, parent_id: str | None = None, generation: int = 0) -> Candidate:
        """The `Candidate` of a point (content-hashed id; a fixed creation time, so the record
        is as reproducible as its source)."""
        return Candidate.from_source(self.problem_id, self.render(point), origin=self.origin(point),
                                     parent_id=parent_id, generation=generation,
                                     created_at="1970-01-01T00:00:00Z")

    # ------------------------------------------------------------------ neighbourhoods
    def distance(self, a: Sequence, b: Sequence) -> int:
        """How many parameters two points differ in."""
        return sum(x != y for x, y in zip(a, b))

    def neighbours(self, point: Sequence, max_distance: int = 2,
                   valid: set[Point] | None = None) -> list[tuple[Point, int]]:
        """The valid points differing from `point` in 1..max_distance parameters, with their
        distance, in enumeration order. `valid` (the family's valid points as a set) may be
        passed to avoid re-checking constraints."""
        if max_distance not in (1, 2):
            raise FamilyError(f"max_distance must be 1 or 2, got {max_distance}")
        ok = valid if valid is not None else set(self.points())
        base = tuple(point)
        out: set[tuple[Point, int]] = set()
        n = len(self.params)
        for i in range(n):
            for vi in self.params[i].values:
                if vi == base[i]:
                    continue
                one = base[:i] + (vi,) + base[i + 1:]
                if one in ok:
                    out.add((one, 1))
                if max_distance < 2:
                    continue
                for j in range(i + 1, n):
                    for vj in self.params[j].values:
                        if vj == base[j]:
                            continue
                        two = one[:j] + (vj,) + one[j + 1:]
                        if two in ok:
                            out.add((two, 2))
        index = {p.name: {v: k for k, v in enumerate(p.values)} for p in self.params}
        return sorted(out, key=lambda t: tuple(index[nm][v] for nm, v in zip(self.param_names, t[0])))


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    return str(v)


def pow2(lo: int, hi: int) -> tuple[int, ...]:
    """Powers of two from lo to hi inclusive."""
    out, v = [], lo
    while v <= hi:
        out.append(v)
        v *= 2
    return tuple(out)


def family_table(families: Sequence[Family]) -> dict[str, Family]:
    """Families keyed by problem id; FamilyError when two share a problem."""
    out: dict[str, Family] = {}
    for f in families:
        if f.problem_id in out:
            raise FamilyError(f"two families for {f.problem_id}: {out[f.problem_id].name} and {f.name}")
        out[f.problem_id] = f
    return out

