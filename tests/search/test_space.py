"""workbench.search.space: moves over an enumerable space, the generator that reaches all of it,
and the search loop's revisiting of dropped children."""
from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from workbench.errors import ConfigError
from workbench.execution.executors import CacheExecutor
from workbench.families import get_family
from workbench.forecast.controls import RandomForecaster
from workbench.landscape import enumerate_landscape
from workbench.problems import get_problem
from workbench.records import Measurement, Status
from workbench.search import SearchRun, make_method
from workbench.search.generators import GenerationContext
from workbench.search.space import Space, SpaceGenerator, space_generator_for_landscapes
from workbench.store import Store

ROOT = Path(__file__).resolve().parents[2]
H200 = ROOT / "kernels_cache" / "landscapes" / "h200"
PID = "L1/08_max_rows"


@pytest.fixture(scope="module")
def small():
    fam = get_family(PID).restricted(algo=["onepass", "loop_vec", "split"], block=[0, 512, 1024], rows=[1, 2],
                                     warps=[1, 4], stages=[0, 1], split=[1, 2], acc=["fp32"])
    return enumerate_landscape(fam)


def _ms(land, seed=0):
    rng = random.Random(seed)
    return [Measurement(candidate_id=c.id, problem_id=land.problem_id, hardware_key="h200", status=Status.OK,
                        reference_ms=1.0, candidate_ms=1.0, speedup=rng.lognormvariate(0, 0.5), reason="synthetic")
            for c in land.candidates]


def test_moves_switch_algorithm_and_change_several_parameters(small):
    sp = Space.from_landscape(small)
    params = {c.id: p for c, p in sp.points}
    cid = next(c.id for c, p in sp.points if p["algo"] == "onepass")
    mv = sp.moves(cid)
    d = {x: sum(params[x][k] != params[cid][k] for k in params[cid]) for x in params}
    assert mv["local"] and all(1 <= d[x] <= 2 for x in mv["local"])
    assert all(3 <= d[x] <= 4 for x in mv["far"])
    switched = {params[x]["algo"] for x in mv["switch"]}
    assert switched == {"loop_vec", "split"}  # one move to each other algorithm
    for a in switched:  # ... to its nearest points
        near = min(d[x] for x in params if params[x]["algo"] == a)
        assert all(d[x] == near for x in mv["switch"] if params[x]["algo"] == a)
    # the whole space is one component under these moves
    assert sp.reachable([cid]) == set(sp.candidates)


def test_generator_seeds_by_screen_fills_children_and_never_repeats(small):
    land = small
    scores = {c.id: random.Random(c.id).random() for c in land.candidates}
    calls = []

    def screen(problem, cands):
        calls.append(len(cands))
        return {c.id: scores[c.id] for c in cands}

    gen = space_generator_for_landscapes([land], screen=screen, n_seeds=3, restart_share=0.5)
    problem = get_problem(PID)
    top = sorted(scores, key=lambda c: -scores[c])
    assert [c.id for c in gen.seeds(problem)] == top[:3]
    seen = set(top[:3])
    parent = gen.space(PID).candidates[top[0]]
    kids = gen.children(GenerationContext(problem, parent, 8, random.Random(0), seen=set(seen)))
    ids = [c.id for c in kids]
    assert len(ids) == 8 == len(set(ids)) and not set(ids) & seen
    assert ids[:4] == top[3:7]  # half are the best screened unseen candidates
    assert calls == [len(land.candidates)]  # the space is screened once
    # with almost everything seen, what is left still comes back
    rest = set(gen.space(PID).candidates) - {top[-1], top[-2]}
    kids = gen.children(GenerationContext(problem, parent, 8, random.Random(0), seen=rest))
    assert {c.id for c in kids} == {top[-1], top[-2]}


def test_generator_checks_its_settings(small):
    with pytest.raises(ConfigError):
        SpaceGenerator([Space.from_landscape(small)], restart_share=1.5)
    with pytest.raises(ConfigError):
        SpaceGenerator([Space.from_landscape(small)], quotas={"local": 0.0})
    with pytest.raises(ConfigError):
        SpaceGenerator([Space.from_landscape(small)]).seeds(get_problem("L1/01_softmax"))


def test_a_search_over_the_space_spends_its_budget_and_revisits_dropped_children(small, tmp_path):
    land = small
    ms = _ms(land)
    n = len(land.candidates)
    ex = CacheExecutor(ms, "h200")
    gen = space_generator_for_landscapes([land], ex.candidate_ids)
    with Store(tmp_path / "s.sqlite") as store:
        # screen_topk with a forecaster that prefers nothing: 16 children, 4 measured, 12 dropped
        run = SearchRun(store, get_problem(PID), ex, gen, RandomForecaster(seed=0), make_method("screen_topk", 4, 4),
                        budget=n, seed=0)
        s = run.run()
        assert s["finish_reason"] == "budget spent" and s["gpu_measurements"] == n  # every candidate measured
        assert s["candidates_considered"] > n  # dropped children came back
        best = max(m.speedup for m in ms)
        assert math.isclose(s["best_speedup"], best)


def test_every_within_2pct_point_is_reachable_from_the_seeds_on_the_shipped_landscapes():
    """On every shipped H200 landscape, the moves alone (no restarts) lead from the generator's
    first seed (random without a screen) to every point, so to every one within 2% of the
    landscape's global best. (Read from the tables directly; the move graph needs only the
    points' ids and parameters.)"""
    import json
    from types import SimpleNamespace

    import pyarrow.parquet as pq

    kern = pq.read_table(H200 / "kernels.parquet", columns=["candidate_id", "status", "speedup"]).to_pylist()
    speed = {r["candidate_id"]: r["speedup"] for r in kern if r["status"] == "ok" and r["speedup"]}
    pts: dict[str, list] = {}
    for r in pq.read_table(H200 / "points.parquet", columns=["problem_id", "point_index", "candidate_id",
                                                              "params"]).to_pylist():
        pts.setdefault(r["problem_id"], []).append((r["point_index"], r["candidate_id"], json.loads(r["params"])))
    assert len(pts) == 24 and not pq.read_table(H200 / "edges.parquet").num_rows  # points only
    for pid, rows in sorted(pts.items()):
        sp = Space(pid, [(SimpleNamespace(id=cid), params) for _, cid, params in sorted(rows)])
        seeds = [c.id for c in SpaceGenerator([sp]).seeds(get_problem(pid))]
        best = max(speed[c] for c in sp.candidates if c in speed)
        good = {c for c in sp.candidates if speed.get(c, 0) >= best * 0.98}
        reach = sp.reachable(seeds[:1])  # from one seed alone
        assert good and good <= reach, f"{pid}: {len(good - reach)} within-2% points unreachable"
        assert reach == set(sp.candidates)  # indeed the whole space
