"""A landscape: every valid point of a problem's kernel family, its neighbourhoods, and (once
measured) one measurement per point, stored so a search over it replays with no GPU.

Neighbourhood of a point (its lineage edges): the valid points differing from it in one
parameter (`param1`) or two (`param2`), plus the outputs of the search's mutation operators
applied to its source (`mutation:<op>`; such a child that renders the same source as a point is
that point). Mutation children that are not points are candidates of the landscape too (origin
`mutation:<op>`, parent the point) and are measured with it.

Layout of a shipped landscape directory (zstd Parquet; the first two files are exactly the
shipped dataset's layout, `workbench/dataset/SCHEMA.md`, so every tool that reads shipped data
reads a landscape):
  problems.parquet, kernels.parquet   the measurement rows with their provenance
  points.parquet                      one row per family point: problem_id, family, point_index,
                                      point_key, candidate_id, params (JSON), neighbours_1 and
                                      neighbours_2 (point indices at distance 1 and 2)
  edges.parquet                       mutation edges: problem_id, parent_id, child_id, kind
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from workbench.errors import WorkbenchError
from workbench.families import Family
from workbench.records import Candidate, Measurement, Problem

POINTS_FILE = "points.parquet"
EDGES_FILE = "edges.parquet"
FORMAT_VERSION = 1

POINTS_SCHEMA = pa.schema([
    ("problem_id", pa.string()), ("family", pa.string()), ("point_index", pa.int32()),
    ("point_key", pa.string()), ("candidate_id", pa.string()), ("params", pa.string()),
    ("neighbours_1", pa.list_(pa.int32())), ("neighbours_2", pa.list_(pa.int32())),
])
EDGES_SCHEMA = pa.schema([
    ("problem_id", pa.string()), ("parent_id", pa.string()), ("child_id", pa.string()), ("kind", pa.string()),
])


class LandscapeError(WorkbenchError):
    """A landscape directory is missing, malformed or does not hold the asked problem."""


@dataclass(frozen=True)
class PointRow:
    index: int
    key: str
    candidate_id: str
    params: dict[str, Any]
    neighbours_1: tuple[int, ...]
    neighbours_2: tuple[int, ...]


@dataclass
class Landscape:
    """One problem's points, their candidates, the extra mutation candidates and the edges.

    `candidates` holds the point candidates in point order, then the mutation children.
    `edges` are (parent candidate id, child candidate id, kind) for mutation edges; the
    param1/param2 edges are the points' neighbour lists."""

    problem_id: str
    family: str
    points: list[PointRow]
    candidates: list[Candidate]
    edges: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def point_ids(self) -> list[str]:
        return [p.candidate_id for p in self.points]

    def neighbourhood(self, candidate_id: str) -> list[tuple[str, str]]:
        """(child id, kind) of a candidate's stored neighbourhood: param1, param2, then mutation
        edges, each in stored order; empty for a candidate without any (a mutation child)."""
        out: list[tuple[str, str]] = []
        by_id = self._by_id()
        row = by_id.get(candidate_id)
        if row is not None:
            out += [(self.points[i].candidate_id, "param1") for i in row.neighbours_1]
            out += [(self.points[i].candidate_id, "param2") for i in row.neighbours_2]
        out += self._mutations().get(candidate_id, [])
        return out

    def _by_id(self) -> dict[str, PointRow]:
        """Points by candidate id (built once; the landscape is not changed after it is read)."""
        if "_by_id_cache" not in self.__dict__:
            self.__dict__["_by_id_cache"] = {p.candidate_id: p for p in self.points}
        return self.__dict__["_by_id_cache"]

    def _mutations(self) -> dict[str, list[tuple[str, str]]]:
        if "_mut_cache" not in self.__dict__:
            m: dict[str, list[tuple[str, str]]] = {}
            for parent, child, kind in self.edges:
                m.setdefault(parent, []).append((child, kind))
            self.__dict__["_mut_cache"] = m
        return self.__dict__["_mut_cache"]


def enumerate_landscape(family: Family, mutations: int = 0, seed: int = 0,
                        max_distance: int = 2) -> Landscape:
    """Every valid point of `family` with its param1/param2 neighbours and, when `mutations` > 0,
    up to that many mutation-operator children of each point (deterministic given `seed`)."""
    pts = family.points()
    index = {pt: i for i, pt in enumerate(pts)}
    valid = set(pts)
    rows, cands = [], []
    for i, pt in enumerate(pts):
        cand = family.candidate(pt)
        nb = family.neighbours(pt, max_distance, valid)
        rows.append(PointRow(i, family.key(pt), cand.id, family.as_dict(pt),
                             tuple(index[q] for q, d in nb if d == 1), tuple(index[q] for q, d in nb if d == 2)))
        cands.append(cand)
    edges: list[tuple[str, str, str]] = []
    if mutations > 0:
        from workbench.search.mutations import neighbourhood

        known = {c.id for c in cands}
        extra: dict[str, Candidate] = {}
        for i, cand in enumerate(list(cands)):
            for child in neighbourhood(cand, mutations, seed=seed * 1_000_003 + i):
                kind = "mutation:" + child.origin.split(":")[1]  # origin "mutation:<op>:<detail>"
                edges.append((cand.id, child.id, kind))
                if child.id not in known and child.id not in extra:
                    extra[child.id] = child
        cands += list(extra.values())
    return Landscape(family.problem_id, family.name, rows, cands, edges)


def measure(landscape: Landscape, problem: Problem, executor,
            on_result: Callable[[Measurement], None] | None = None,
            candidates: Sequence[Candidate] | None = None) -> list[Measurement]:
    """Measure the landscape's candidates (or the given subset) through `executor`; returns the
    measurements in candidate order, handing each to `on_result` as it completes."""
    cs = list(candidates) if candidates is not None else landscape.candidates
    futures = executor.submit(problem, cs)
    if on_result is not None:
        for f in futures:
            f.add_done_callback(lambda fut: on_result(fut.result()))
    return [f.result() for f in futures]


# --------------------------------------------------------------------------- storage
def _write(table: pa.Table, path: Path) -> None:
    pq.write_table(table, path, compression="zstd")


def write_landscapes(directory: str | Path, landscapes: Iterable[Landscape], problems: Iterable[Problem],
                     measurements: Iterable[Measurement]) -> dict[str, int]:
    """Write the landscapes and their measurements to `directory` (layout in the module
    docstring); only measured candidates go into kernels.parquet. Returns row counts."""
    from workbench.dataset.shipped import write_shipped
    from workbench.dataset.sources import RecordSet

    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    lands = list(landscapes)
    ms = list(measurements)
    cands = {c.id: c for land in lands for c in land.candidates}
    counts = write_shipped(RecordSet(list(problems), list(cands.values()), ms), d)
    prow: dict[str, list] = {n: [] for n in POINTS_SCHEMA.names}
    erow: dict[str, list] = {n: [] for n in EDGES_SCHEMA.names}
    for land in lands:
        for p in land.points:
            for k, v in (("problem_id", land.problem_id), ("family", land.family), ("point_index", p.index),
                         ("point_key", p.key), ("candidate_id", p.candidate_id),
                         ("params", json.dumps(p.params, sort_keys=True)),
                         ("neighbours_1", list(p.neighbours_1)), ("neighbours_2", list(p.neighbours_2))):
                prow[k].append(v)
        for parent, child, kind in land.edges:
            for k, v in (("problem_id", land.problem_id), ("parent_id", parent), ("child_id", child), ("kind", kind)):
                erow[k].append(v)
    meta = {b"workbench_landscape_format": str(FORMAT_VERSION).encode()}
    _write(pa.table(prow, schema=POINTS_SCHEMA.with_metadata(meta)), d / POINTS_FILE)
    _write(pa.table(erow, schema=EDGES_SCHEMA.with_metadata(meta)), d / EDGES_FILE)
    return {**counts, "points": len(prow["problem_id"]), "edges": len(erow["problem_id"])}


def read_landscapes(directory: str | Path, problem_ids: Iterable[str] | None = None) -> dict[str, Landscape]:
    """The landscapes stored in `directory` (optionally only some problems), keyed by problem
    id, with their candidates (those that have measurement rows) and mutation edges."""
    from workbench.dataset.shipped import load_shipped

    d = Path(directory)
    if not (d / POINTS_FILE).exists():
        raise LandscapeError(f"{d}: no {POINTS_FILE}; write a landscape there first "
                             "(benchmarks/landscape_bench.py, or workbench.landscape.write_landscapes)")
    want = set(problem_ids) if problem_ids is not None else None
    rs = load_shipped(d)
    cands = {c.id: c for c in rs.candidates}
    pts = pq.read_table(d / POINTS_FILE).to_pylist()
    edges = pq.read_table(d / EDGES_FILE).to_pylist()
    out: dict[str, Landscape] = {}
    for r in pts:
        pid = r["problem_id"]
        if want is not None and pid not in want:
            continue
        land = out.setdefault(pid, Landscape(pid, r["family"], [], [], []))
        land.points.append(PointRow(r["point_index"], r["point_key"], r["candidate_id"], json.loads(r["params"]),
                                    tuple(r["neighbours_1"]), tuple(r["neighbours_2"])))
    for land in out.values():
        land.points.sort(key=lambda p: p.index)
        if [p.index for p in land.points] != list(range(len(land.points))):
            raise LandscapeError(f"{d}: the points of {land.problem_id} are not indexed 0..n-1")
        seen = set()
        for cid in land.point_ids:
            if cid in cands and cid not in seen:
                land.candidates.append(cands[cid])
                seen.add(cid)
    held = {pid: {c.id for c in land.candidates} for pid, land in out.items()}
    for e in edges:
        land = out.get(e["problem_id"])
        if land is None:
            continue
        land.edges.append((e["parent_id"], e["child_id"], e["kind"]))
        if e["child_id"] in cands and e["child_id"] not in held[land.problem_id]:
            land.candidates.append(cands[e["child_id"]])
            held[land.problem_id].add(e["child_id"])
    if want is not None and (missing := sorted(want - set(out))):
        raise LandscapeError(f"{d}: no landscape for {', '.join(missing)}; it holds {', '.join(sorted(out))}")
    return out


def seed_points(landscape: Landscape, n: int, salt: str = "seeds") -> list[str]:
    """`n` point candidate ids drawn without replacement by a generator seeded with the problem id
    (the same seeds for every method and search seed: a search's starting points)."""
    rng = random.Random(f"{salt}:{landscape.problem_id}")
    ids = landscape.point_ids
    return rng.sample(ids, min(n, len(ids)))
