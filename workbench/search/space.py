"""A search over an enumerable space of kernel-family points that can reach all of it.

A `Space` is one problem's enumerable candidates: every point of its kernel family with its
parameter values (a landscape's points, or a family's), plus candidates that are not points
but hang off one by a stored edge (a landscape's mutation children). Its *moves* from a point:

- `local`: the points that differ in one or two parameters (a landscape's param1 / param2
  neighbourhood);
- `switch`: for every other value of the algorithm parameter (`algo`), the points of that
  algorithm nearest to the parent (fewest differing parameters): switching the algorithm
  re-fits the parameters that only the other algorithm uses, which no one- or two-parameter
  move can do when they are pinned;
- `far`: the points that differ in three or four parameters (several at once);
- `edge`: the candidates of the point's stored edges (mutation children).

`SpaceGenerator` proposes a parent's children from those moves and from *restarts*: the
candidates of the whole space ranked by a screening score (a forecaster's expected log2
speedup of every candidate, computed once per problem), best first; its seeds are the top of
that ranking. Without a screen (no forecaster) seeds and restarts are drawn at random, seeded
by the problem id. The generator re-proposes candidates the search generated but neither
measured nor trusted (`revisits`), so a run ends only when every candidate of the space has
been measured or trusted, or its budget is spent: it never runs dry early.

A child list of `ctx.n` is filled in this order: `restarts` of the best-screened unjudged
candidates (a share of n, `restart_share`), then the parent's moves, drawn by the search's RNG
with quotas per kind (`quotas`, shares of what is left; a kind with too few moves hands its
quota to the next), then more restarts when the moves run out. The method (screen_topk, ...)
then ranks the children by the run's forecasts.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from workbench.errors import ConfigError
from workbench.records import Candidate, Problem
from workbench.search.generators import FailedGeneration, GenerationContext, Generator

#: The parameter every family names its algorithm by.
ALGO = "algo"
MOVE_KINDS = ("local", "switch", "far", "edge")
#: Default shares of the moves drawn per kind (after the restarts).
DEFAULT_QUOTAS = {"local": 0.5, "switch": 0.25, "far": 0.25, "edge": 0.0}

#: screen(problem, candidates) -> {candidate id: score, higher is better}
Screen = Callable[[Problem, Sequence[Candidate]], Mapping[str, float]]


@dataclass
class Space:
    """One problem's enumerable candidates. `points[i]` = (candidate, parameter values) of the
    family's point i; `extra` are candidates that are not points; `edges` maps a candidate id to
    the ids of its stored edge children (any of the space's candidates)."""

    problem_id: str
    points: list[tuple[Candidate, dict[str, Any]]]
    extra: list[Candidate] = field(default_factory=list)
    edges: dict[str, list[str]] = field(default_factory=dict)
    algo: str = ALGO

    def __post_init__(self):
        if not self.points:
            raise ConfigError(f"the space of {self.problem_id} has no points")
        names = list(self.points[0][1])
        if any(list(p) != names for _, p in self.points):
            raise ConfigError(f"the points of {self.problem_id} do not all name the same parameters")
        self.param_names = names
        # Each parameter's values as small integers, so distances are one vectorised comparison.
        codes = []
        for name in names:
            index: dict[Any, int] = {}
            codes.append([index.setdefault(repr(p[name]), len(index)) for _, p in self.points])
        self._codes = np.asarray(codes, dtype=np.int32).T.reshape(len(self.points), len(names))
        self._index = {c.id: i for i, (c, _) in enumerate(self.points)}
        self._algo_col = names.index(self.algo) if self.algo in names else None
        self.candidates: dict[str, Candidate] = {c.id: c for c, _ in self.points}
        for c in self.extra:
            self.candidates.setdefault(c.id, c)

    @classmethod
    def from_landscape(cls, landscape, keep: Iterable[str] | None = None, algo: str = ALGO) -> "Space":
        """A landscape's points and mutation children (only the candidates in `keep`, e.g. the
        measured ones, when given)."""
        ok = set(keep) if keep is not None else None
        by_id = {c.id: c for c in landscape.candidates}
        pts = [(by_id[p.candidate_id], dict(p.params)) for p in landscape.points
               if p.candidate_id in by_id and (ok is None or p.candidate_id in ok)]
        point_ids = {c.id for c, _ in pts}
        all_points = set(landscape.point_ids)
        extra = [c for c in landscape.candidates if c.id not in all_points and (ok is None or c.id in ok)]
        held = point_ids | {c.id for c in extra}
        edges: dict[str, list[str]] = {}
        for parent, child, _kind in landscape.edges:
            if parent in held and child in held and child != parent:
                edges.setdefault(parent, []).append(child)
        return cls(landscape.problem_id, pts, extra, {k: list(dict.fromkeys(v)) for k, v in edges.items()}, algo)

    @classmethod
    def from_family(cls, family, algo: str = ALGO) -> "Space":
        """Every valid point of a kernel family, rendered."""
        return cls(family.problem_id, [(family.candidate(pt), family.as_dict(pt)) for pt in family.points()],
                   algo=algo)

    # ------------------------------------------------------------------ moves
    def point_index(self, candidate_id: str) -> int | None:
        return self._index.get(candidate_id)

    def distances(self, candidate_id: str) -> np.ndarray | None:
        """(n points,) how many parameters each point differs in from the candidate's point."""
        i = self._index.get(candidate_id)
        if i is None:
            return None
        return (self._codes != self._codes[i]).sum(axis=1)

    def moves(self, candidate_id: str) -> dict[str, list[str]]:
        """The candidate's moves by kind (module doc), each list in point order; a candidate that
        is not a point has only its edges."""
        out: dict[str, list[str]] = {k: [] for k in MOVE_KINDS}
        out["edge"] = list(self.edges.get(candidate_id, []))
        d = self.distances(candidate_id)
        if d is None:
            return out
        ids = [c.id for c, _ in self.points]
        out["local"] = [ids[j] for j in np.flatnonzero((d >= 1) & (d <= 2))]
        out["far"] = [ids[j] for j in np.flatnonzero((d >= 3) & (d <= 4))]
        if self._algo_col is not None:
            i = self._index[candidate_id]
            algos = self._codes[:, self._algo_col]
            for a in np.unique(algos):
                if a == algos[i]:
                    continue
                mask = algos == a
                near = d[mask].min()
                out["switch"] += [ids[j] for j in np.flatnonzero(mask & (d == near))]
        return out

    def reachable(self, start: Iterable[str], kinds: Sequence[str] = MOVE_KINDS) -> set[str]:
        """Every candidate reachable from `start` by moves of `kinds` (breadth first over point
        indices, vectorised; edges followed from points and from edge children alike)."""
        ids = [c.id for c, _ in self.points]
        seen_pts = np.zeros(len(ids), dtype=bool)
        seen: set[str] = set()
        todo: list[str] = []

        def add(cid: str) -> None:
            if cid in self.candidates and cid not in seen:
                seen.add(cid)
                todo.append(cid)
                i = self._index.get(cid)
                if i is not None:
                    seen_pts[i] = True

        for c in start:
            add(c)
        algos = self._codes[:, self._algo_col] if self._algo_col is not None else None
        while todo:
            cid = todo.pop()
            if "edge" in kinds:
                for nxt in self.edges.get(cid, []):
                    add(nxt)
            d = self.distances(cid)
            if d is None:
                continue
            mask = np.zeros(len(ids), dtype=bool)
            if "local" in kinds:
                mask |= (d >= 1) & (d <= 2)
            if "far" in kinds:
                mask |= (d >= 3) & (d <= 4)
            if "switch" in kinds and algos is not None:
                i = self._index[cid]
                for a in np.unique(algos):
                    if a != algos[i]:
                        other = algos == a
                        mask |= other & (d == d[other].min())
            for j in np.flatnonzero(mask & ~seen_pts):
                add(ids[j])
        return seen


class SpaceGenerator(Generator):
    """Seeds, moves and restarts over `Space`s (module doc). `screen` scores a problem's
    candidates once (None: random seeds and restarts); `n_seeds` seeds; `restart_share` of each
    child list are restarts; `quotas` share the rest among the move kinds."""

    name = "space"
    #: The search re-proposes generated candidates it neither measured nor trusted (SearchRun).
    revisits = True

    def __init__(self, spaces: Iterable[Space], screen: Screen | None = None, n_seeds: int = 4,
                 restart_share: float = 0.5, quotas: Mapping[str, float] | None = None):
        self._spaces = {s.problem_id: s for s in spaces}
        if not 0.0 <= restart_share <= 1.0:
            raise ConfigError(f"restart_share is a share in [0, 1], got {restart_share}")
        q = dict(DEFAULT_QUOTAS if quotas is None else quotas)
        if set(q) - set(MOVE_KINDS) or any(v < 0 for v in q.values()) or not sum(q.values()) > 0:
            raise ConfigError(f"quotas are shares >= 0 of {', '.join(MOVE_KINDS)} with a positive sum, got {q}")
        total = sum(q.values())
        self.quotas = {k: q.get(k, 0.0) / total for k in MOVE_KINDS}
        if n_seeds < 1:
            raise ConfigError(f"n_seeds must be >= 1, got {n_seeds}")
        self.n_seeds = int(n_seeds)
        self.restart_share = float(restart_share)
        self.screen = screen
        self._ranked: dict[str, list[str]] = {}

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "n_seeds": self.n_seeds, "restart_share": self.restart_share,
                "quotas": self.quotas, "screen": self.screen is not None}

    def space(self, problem_id: str) -> Space:
        if problem_id not in self._spaces:
            raise ConfigError(f"no enumerable space for {problem_id}; spaces: {', '.join(sorted(self._spaces))}")
        return self._spaces[problem_id]

    def ranking(self, problem: Problem) -> list[str]:
        """Every candidate of the problem's space, best screened first (ties: space order); a
        seeded random order without a screen. Computed once per problem."""
        if problem.id not in self._ranked:
            sp = self.space(problem.id)
            ids = list(sp.candidates)
            if self.screen is None:
                rng = random.Random(f"space-restarts:{problem.id}")
                rng.shuffle(ids)
            else:
                scores = self.screen(problem, list(sp.candidates.values()))
                pos = {cid: i for i, cid in enumerate(ids)}

                def key(cid: str) -> tuple[float, int]:
                    s = scores.get(cid)
                    return (-s if s is not None and math.isfinite(s) else math.inf, pos[cid])

                ids.sort(key=key)
            self._ranked[problem.id] = ids
        return self._ranked[problem.id]

    def seeds(self, problem: Problem) -> list[Candidate]:
        sp = self.space(problem.id)
        return [sp.candidates[cid] for cid in self.ranking(problem)[: self.n_seeds]]

    def children(self, ctx: GenerationContext) -> list[Candidate | FailedGeneration]:
        sp = self.space(ctx.problem.id)
        n = int(ctx.n)
        if n <= 0:
            return []
        taken: list[str] = []
        chosen: set[str] = set()

        def take(cid: str) -> None:
            if cid not in chosen and cid not in ctx.seen and cid != ctx.parent.id:
                chosen.add(cid)
                taken.append(cid)

        ranked = self.ranking(ctx.problem)
        pos = 0  # next restart to consider, in ranking order

        def restart(upto: int) -> None:
            nonlocal pos
            while len(taken) < upto and pos < len(ranked):
                take(ranked[pos])
                pos += 1

        restart(int(round(self.restart_share * n)))
        moves = sp.moves(ctx.parent.id)
        free = {k: [c for c in moves[k] if c not in ctx.seen and c != ctx.parent.id] for k in MOVE_KINDS}
        left = n - len(taken)
        carry = 0.0
        for k in MOVE_KINDS:  # quotas in kind order; a short kind hands the rest of its quota on
            quota = self.quotas[k] * left + carry
            pool = [c for c in free[k] if c not in chosen]
            m = min(len(pool), int(math.floor(quota + 1e-9)))
            for cid in (ctx.rng.sample(pool, m) if m < len(pool) else pool):
                take(cid)
            carry = quota - m
        spare = [c for k in MOVE_KINDS for c in free[k] if c not in chosen]
        ctx.rng.shuffle(spare)
        for cid in spare:  # rounding left room: more moves
            if len(taken) >= n:
                break
            take(cid)
        restart(n)  # the moves ran out: more restarts
        return [sp.candidates[cid] for cid in taken[:n]]


def space_generator_for_landscapes(landscapes, measured_ids: Iterable[str] | None = None,
                                   screen: Screen | None = None, **kw: Any) -> SpaceGenerator:
    """A SpaceGenerator over stored landscapes (only the `measured_ids` candidates, when given),
    for replayed searches."""
    keep = set(measured_ids) if measured_ids is not None else None
    return SpaceGenerator([Space.from_landscape(land, keep) for land in landscapes], screen, **kw)


def forecast_screen(forecaster, hardware) -> Screen:
    """A screen that scores candidates by `forecaster`'s expected log2 speedup over the reference
    (one batch per problem; an abstention scores 0, no speedup)."""
    def screen(problem: Problem, candidates: Sequence[Candidate]) -> dict[str, float]:
        fs = forecaster.forecast_batch([(problem, c) for c in candidates], hardware, relative_to="reference")
        return {c.id: (0.0 if f.abstained else float(f.expected_log2_speedup)) for c, f in zip(candidates, fs)}

    return screen
