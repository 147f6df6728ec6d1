"""A search generator that replays a stored landscape: a parent's children are drawn from its
stored neighbourhood, so a search over the landscape runs exactly, with no GPU.

Seeds: `n_seeds` points drawn by `seed_points` (seeded by the problem id: the same for every
method and search seed). Children of a parent: its stored neighbours (param1, param2, then
mutation edges) that the landscape measured and the search has not seen, `ctx.n` of them drawn
by the search's RNG, in the drawn order (measure_all measures them in that order). A parent
whose neighbourhood is used up gets no children (the search then picks another parent).
"""
from __future__ import annotations

from typing import Iterable

from workbench.errors import ConfigError
from workbench.landscape.core import Landscape, seed_points
from workbench.records import Candidate, Problem
from workbench.search.generators import FailedGeneration, GenerationContext, Generator


class LandscapeGenerator(Generator):
    name = "landscape"

    def __init__(self, landscapes: Iterable[Landscape], measured_ids: Iterable[str] | None = None,
                 n_seeds: int = 4):
        self._lands = {land.problem_id: land for land in landscapes}
        keep = set(measured_ids) if measured_ids is not None else None
        self._cands = {land.problem_id: {c.id: c for c in land.candidates if keep is None or c.id in keep}
                       for land in self._lands.values()}
        self.n_seeds = n_seeds

    def _land(self, problem_id: str) -> Landscape:
        if problem_id not in self._lands:
            raise ConfigError(f"no stored landscape for {problem_id}; landscapes: {', '.join(sorted(self._lands))}")
        return self._lands[problem_id]

    def seeds(self, problem: Problem) -> list[Candidate]:
        land = self._land(problem.id)
        pool = self._cands[problem.id]
        picked = [cid for cid in seed_points(land, len(land.points)) if cid in pool][: self.n_seeds]
        if not picked:
            raise ConfigError(f"the landscape of {problem.id} has no measured point to start from")
        return [pool[cid] for cid in picked]

    def neighbourhood(self, problem_id: str, parent_id: str) -> list[str]:
        """The measured candidate ids of a parent's stored neighbourhood, in stored order."""
        pool = self._cands[problem_id]
        out, seen = [], set()
        for cid, _kind in self._land(problem_id).neighbourhood(parent_id):
            if cid in pool and cid not in seen:
                seen.add(cid)
                out.append(cid)
        return out

    def children(self, ctx: GenerationContext) -> list[Candidate | FailedGeneration]:
        pool = self._cands[ctx.problem.id]
        free = [cid for cid in self.neighbourhood(ctx.problem.id, ctx.parent.id) if cid not in ctx.seen]
        picked = free if len(free) <= ctx.n else ctx.rng.sample(free, ctx.n)
        if len(free) <= ctx.n:
            ctx.rng.shuffle(picked)
        return [pool[cid] for cid in picked]
