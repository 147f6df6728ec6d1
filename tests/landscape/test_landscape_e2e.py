"""A small landscape end to end: enumerated, measured on the CPU interpreter, shipped (Parquet,
zstd), read back and replayed by a search; the replay generator's neighbourhoods are the stored
lineage."""
from __future__ import annotations

import random

import pyarrow.parquet as pq
import pytest

from workbench.dataset.shipped import load_shipped
from workbench.execution.executors import CacheExecutor, CPUExecutor
from workbench.families import get_family
from workbench.landscape import (LandscapeError, LandscapeGenerator, enumerate_landscape, measure, read_landscapes,
                                 structure, write_landscapes)
from workbench.problems import get_problem
from workbench.search import SearchRun, best_curve, make_method
from workbench.search.generators import GenerationContext
from workbench.store import Store

PID = "L1/02_relu"


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    fam = get_family(PID).restricted(algo=["flat"], block=[512, 1024], warps=[1, 4], mask=["always"], evict=["none"])
    land = enumerate_landscape(fam, mutations=1, seed=0)
    problem = get_problem(PID)
    with CPUExecutor(workers=2) as ex:
        ms = measure(land, problem, ex)
    d = tmp_path_factory.mktemp("landscape")
    counts = write_landscapes(d, [land], [problem], ms)
    return fam, land, ms, d, counts


def test_enumerated_landscape_has_points_neighbours_and_mutation_children(shipped):
    fam, land, ms, _, counts = shipped
    assert [p.key for p in land.points] == [fam.key(pt) for pt in fam.points()]
    assert len(land.points) == 4
    assert len(land.candidates) > len(land.points)  # mutation children are candidates too
    assert all(kind.startswith("mutation:") and kind.count(":") == 1 for _, _, kind in land.edges)
    for p in land.points:  # stored neighbours are the family's, by index
        pt = fam.parse_key(p.key)
        want = fam.neighbours(pt, 2)
        got = [(fam.parse_key(land.points[i].key), 1) for i in p.neighbours_1] + \
              [(fam.parse_key(land.points[i].key), 2) for i in p.neighbours_2]
        assert sorted(got) == sorted(want)
    assert len(ms) == len(land.candidates)
    assert sum(m.ok for m in ms) >= len(land.points)  # every family point is correct
    assert counts["points"] == 4 and counts["edges"] == len(land.edges)


def test_shipped_files_are_zstd_parquet_and_round_trip(shipped):
    _, land, ms, d, _ = shipped
    for name in ("kernels.parquet", "points.parquet", "edges.parquet", "problems.parquet"):
        meta = pq.ParquetFile(d / name).metadata
        assert meta.row_group(0).column(0).compression == "ZSTD", name
    rs = load_shipped(d)
    assert {m.candidate_id: m.speedup for m in rs.measurements} == {m.candidate_id: m.speedup for m in ms}
    back = read_landscapes(d)[PID]
    assert back.points == land.points
    assert sorted(back.edges) == sorted(land.edges)
    assert {c.id for c in back.candidates} == {c.id for c in land.candidates}
    assert {c.id: c.source for c in back.candidates} == {c.id: c.source for c in land.candidates}
    with pytest.raises(LandscapeError, match="no landscape for"):
        read_landscapes(d, ["L1/01_softmax"])


def test_replay_generator_neighbourhoods_match_the_stored_lineage(shipped):
    _, land, ms, d, _ = shipped
    back = read_landscapes(d)[PID]
    gen = LandscapeGenerator([back])
    problem = get_problem(PID)
    edges = pq.read_table(d / "edges.parquet").to_pylist()
    points = pq.read_table(d / "points.parquet").to_pylist()
    by_index = {r["point_index"]: r["candidate_id"] for r in points}
    for r in points:
        stored = {by_index[i] for i in r["neighbours_1"] + r["neighbours_2"]}
        stored |= {e["child_id"] for e in edges if e["parent_id"] == r["candidate_id"]}
        stored.discard(r["candidate_id"])
        parent = next(c for c in back.candidates if c.id == r["candidate_id"])
        ctx = GenerationContext(problem=problem, parent=parent, n=100, rng=random.Random(0))
        kids = gen.children(ctx)
        assert {c.id for c in kids} == stored
        ctx2 = GenerationContext(problem=problem, parent=parent, n=2, rng=random.Random(0),
                                 seen={c.id for c in kids[:1]})
        some = gen.children(ctx2)
        assert len(some) == min(2, len(stored) - 1) and {c.id for c in some} <= stored - {kids[0].id}


def test_a_search_replays_exactly_with_no_gpu(shipped):
    _, _, ms, d, _ = shipped
    lands = read_landscapes(d)
    rs = load_shipped(d)
    problem = get_problem(PID)

    def run(tmp):
        with Store(tmp) as store:
            r = SearchRun(store, problem, CacheExecutor(rs.measurements, "cpu"), LandscapeGenerator(lands.values(), n_seeds=2),
                          None, make_method("measure_all", k=2), budget=6, seed=3)
            while r.step():
                pass
            return r.summary()["best_speedup"], best_curve(store.events(r.search_id))

    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as t:
        a = run(Path(t) / "a.sqlite")
        b = run(Path(t) / "b.sqlite")
    assert a == b and a[0] is not None
    assert a[0] <= max(m.speedup for m in ms if m.ok)


def test_structure_of_the_measured_landscape(shipped):
    _, land, ms, _, _ = shipped
    s = structure(ms)
    assert s["points"] == len(land.candidates) and s["correct"] == sum(m.ok for m in ms)
    assert 1 <= s["speed_clusters"] <= s["correct"]
    assert 0 < s["within_tie_share"] <= 1 and s["spread"] >= 1
