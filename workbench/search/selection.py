"""Parent selection over the archive: PUCT, and an islands wrapper around it.

PUCT score of a usable entry i (higher is picked):

    score(i) = Q(i) + c * P(i) * sqrt(N + 1) / (1 + n(i))

- Q(i): the best log2 speedup in i's subtree (i and its descendants), min-max normalised over
  the usable entries to [0, 1] (0.5 when they are all equal). A parent is judged by the best
  kernel it led to, not by the average: kernel search wants the maximum.
- P(i): the prior. "rank": proportional to 1 / (1 + rank of i's own speedup), favouring fast
  kernels while leaving slow ones a share; "uniform": 1 / (number of usable entries).
- n(i): times i was expanded; N: total expansions. c: the exploration constant.
Ties are broken by the RNG passed in, so selection is deterministic given the seed.
"""
from __future__ import annotations

import abc
import math
import random
from typing import Any

from workbench.errors import ConfigError
from workbench.search.archive import Archive, Entry


class Selector(abc.ABC):
    """Picks the next parent to expand."""

    @abc.abstractmethod
    def select(self, archive: Archive, rng: random.Random, step: int) -> str | None:
        """A usable entry's candidate id, or None when no entry is usable."""

    @abc.abstractmethod
    def describe(self) -> dict[str, Any]:
        """JSON-able configuration, stored with the search."""

    def island_of_child(self, archive: Archive, parent_id: str | None, index: int) -> int:
        """The island a new entry joins (seeds: spread by `index`; children: the parent's)."""
        return 0


class PUCTSelector(Selector):
    def __init__(self, c: float = 1.0, prior: str = "rank"):
        if prior not in ("rank", "uniform"):
            raise ConfigError(f"prior must be 'rank' or 'uniform', got {prior!r}")
        if c < 0:
            raise ConfigError(f"the exploration constant c must be >= 0, got {c}")
        self.c = c
        self.prior = prior

    def describe(self) -> dict[str, Any]:
        return {"kind": "puct", "c": self.c, "prior": self.prior}

    def scores(self, archive: Archive, among: list[Entry] | None = None) -> dict[str, float]:
        """PUCT score of every usable entry (or of `among`), keyed by candidate id."""
        pool = among if among is not None else archive.usable()
        if not pool:
            return {}
        q_raw = {e.candidate_id: archive.subtree_best_log2(e.candidate_id) for e in pool}
        lo, hi = min(q_raw.values()), max(q_raw.values())  # type: ignore[type-var]
        span = hi - lo  # type: ignore[operator]
        if self.prior == "rank":
            order = sorted(pool, key=lambda e: -e.speedup)  # type: ignore[operator]
            weights = {e.candidate_id: 1.0 / (1 + r) for r, e in enumerate(order)}
        else:
            weights = {e.candidate_id: 1.0 for e in pool}
        total_w = sum(weights.values())
        n_total = sum(e.visits for e in pool)
        out = {}
        for e in pool:
            q = 0.5 if span <= 0 else (q_raw[e.candidate_id] - lo) / span  # type: ignore[operator]
            u = self.c * weights[e.candidate_id] / total_w * math.sqrt(n_total + 1) / (1 + e.visits)
            out[e.candidate_id] = q + u
        return out

    def select(self, archive: Archive, rng: random.Random, step: int,
               among: list[Entry] | None = None) -> str | None:
        s = self.scores(archive, among)
        if not s:
            return None
        top = max(s.values())
        ties = [cid for cid, v in s.items() if v >= top - 1e-12]
        return ties[0] if len(ties) == 1 else rng.choice(ties)


class IslandSelector(Selector):
    """Islands: entries are split into `n_islands` sub-populations that evolve apart.

    Seeds are dealt round-robin to islands and children join their parent's island. Step `s`
    expands island `s % n_islands` (the next non-empty one), by PUCT among that island's entries.
    Every `migrate_every` steps the global best entry is also a candidate parent in the island
    being expanded (migration), so good kernels spread.
    """

    def __init__(self, n_islands: int = 4, migrate_every: int = 10, puct: PUCTSelector | None = None):
        if n_islands < 1:
            raise ConfigError(f"n_islands must be >= 1, got {n_islands}")
        self.n_islands = n_islands
        self.migrate_every = migrate_every
        self.puct = puct or PUCTSelector()

    def describe(self) -> dict[str, Any]:
        return {"kind": "islands", "n_islands": self.n_islands, "migrate_every": self.migrate_every,
                "puct": self.puct.describe()}

    def island_of_child(self, archive: Archive, parent_id: str | None, index: int) -> int:
        parent = archive.get(parent_id)
        return parent.island if parent is not None else index % self.n_islands

    def select(self, archive: Archive, rng: random.Random, step: int) -> str | None:
        usable = archive.usable()
        if not usable:
            return None
        for k in range(self.n_islands):
            island = (step + k) % self.n_islands
            pool = [e for e in usable if e.island == island]
            if not pool:
                continue
            if self.migrate_every and step % self.migrate_every == 0:
                best = max(usable, key=lambda e: e.speedup)  # type: ignore[arg-type, return-value]
                if best not in pool:
                    pool.append(best)
            return self.puct.select(archive, rng, step, among=pool)
        return None


def make_selector(spec: str = "puct", **kw: Any) -> Selector:
    """'puct' or 'islands' (keyword arguments go to the selector)."""
    if spec == "puct":
        return PUCTSelector(**kw)
    if spec == "islands":
        return IslandSelector(**kw)
    raise ConfigError(f"unknown selector {spec!r}; use 'puct' or 'islands'")
