"""workbench.landscape.truth (scoring against the global best) and the search-state calibration
pairs of workbench.landscape.trust."""
from __future__ import annotations

import math
import random

import numpy as np
import pytest

from workbench.execution.executors import CacheExecutor
from workbench.families import get_family
from workbench.forecast.controls import RandomForecaster
from workbench.landscape import enumerate_landscape
from workbench.landscape.trust import pairs_from_states, search_state_pairs
from workbench.landscape.truth import (best_at, curve_of_order, global_best_share, median_ci, paired, ratio_ci,
                                       to_within, truth_block)
from workbench.problems import get_problem
from workbench.records import Measurement, Status
from workbench.search import SearchRun, make_method
from workbench.search.events import Forecasted, Measured, Selected, decode_all
from workbench.search.space import space_generator_for_landscapes
from workbench.store import Store


def _run(pid, seed, curve, budget=8):
    return {"problem_id": pid, "seed": seed, "budget": budget, "curve": curve}


def test_a_run_read_against_the_global_best():
    curve = [(1, 1.0), (3, 1.5), (6, 1.99)]
    assert best_at(curve, 2) == 1.0 and best_at(curve, 0) == 0.0
    assert global_best_share(curve, 2.0, 4) == 0.75
    assert to_within(curve, 2.0, 8) == 6 and to_within(curve, 2.0, 5) == 6  # censored at budget + 1
    assert to_within(curve, 2.0, 8, rel=0.0) == 9
    assert curve_of_order(["a", "b", "c", "d"], {"a": 1.0, "b": None, "c": 0.5, "d": 2.0}) == [(1, 1.0), (4, 2.0)]
    with pytest.raises(ValueError):
        global_best_share(curve, 0.0, 4)


def test_blocks_and_paired_differences():
    bests = {"p": 2.0, "q": 4.0}
    mine = [_run("p", 0, [(1, 2.0)]), _run("q", 0, [(2, 3.0), (5, 4.0)]), _run("p", 1, [(3, 2.0)])]
    other = [_run("p", 0, [(4, 2.0)]), _run("q", 0, [(1, 1.0)]), _run("p", 1, [(3, 2.0)]), _run("x", 0, [(1, 1.0)])]
    b = truth_block(mine, bests)
    assert b["to_within2pct_median"] == 3 and b["global_best_share_median"] == 1.0 and b["within2pct_rate"] == 1.0
    lo, hi = b["to_within2pct_median_ci"]
    assert 1 <= lo <= 3 <= hi <= 5
    d = paired(mine, other, bests)
    assert d["pairs"] == 3
    # to_within: mine (1, 5, 3), other (4, 9, 3): median 3 - 4; mean gain ((4-1) + (9-5) + 0) / 3
    assert d["to_within2pct_median_diff"] == -1 and d["to_within2pct_mean_gain"] == pytest.approx(7 / 3)
    assert d["global_best_share_mean_gain"] == pytest.approx((0 + 0.75 + 0) / 3)
    assert d["to_within2pct_mean_gain_ci"][0] <= d["to_within2pct_mean_gain"] <= d["to_within2pct_mean_gain_ci"][1]
    assert median_ci([1.0]) is None
    assert ratio_ci([1, 0, 1], [2, 2, 2]) is not None and ratio_ci([1], [2]) is None
    lo, hi = ratio_ci([0, 0, 0, 1], [1, 1, 1, 1])
    assert 0 <= lo <= 0.25 <= hi <= 1


def test_search_state_pairs_are_the_states_the_method_saw(tmp_path):
    pid = "L1/08_max_rows"
    fam = get_family(pid).restricted(algo=["onepass", "loop_vec"], block=[0, 512, 1024], rows=[1, 2], warps=[1, 4],
                                     stages=[0, 1], split=[1], acc=["fp32"])
    land = enumerate_landscape(fam)
    rng = random.Random(3)
    speed = {c.id: rng.lognormvariate(0, 0.5) for c in land.candidates}
    bad = land.candidates[5].id
    ms = [Measurement(candidate_id=c.id, problem_id=pid, hardware_key="h200",
                      status=Status.OK if c.id != bad else Status.INCORRECT, reference_ms=1.0, candidate_ms=1.0,
                      speedup=speed[c.id] if c.id != bad else None, reason="synthetic") for c in land.candidates]
    truth = {c.id: (speed[c.id] if c.id != bad else math.nan) for c in land.candidates}
    ex = CacheExecutor(ms, "h200")
    with Store(tmp_path / "s.sqlite") as store:
        run = SearchRun(store, get_problem(pid), ex, space_generator_for_landscapes([land], ex.candidate_ids),
                        RandomForecaster(seed=1), make_method("screen_topk", 2, 3), budget=14, seed=0)
        run.run()
        events = decode_all(store.events(run.search_id))
    states = search_state_pairs(events, truth, pid, seed=0)
    # by hand: every forecast of an expansion step, with the best measured before that step
    want, best, parent, step_best = [], -math.inf, None, {}
    for e in events:
        if isinstance(e, Selected):
            parent = e.parent_id
            step_best[e.step] = best
        elif isinstance(e, Measured) and e.measurement.ok:
            best = max(best, e.measurement.speedup)
        elif isinstance(e, Forecasted) and e.step and parent:
            want.append((e.forecast.candidate_id, step_best[e.step]))
    assert [(s.child_id, s.reference_speedup) for _, s in states] == want and len(want) >= 12
    assert all(math.isfinite(s.parent_speedup) for _, s in states)
    assert {s.child_id for _, s in states if math.isnan(s.child_speedup)} <= {bad}
    pairs = pairs_from_states(states, "best")
    assert len(pairs) == len(states) and pairs.probabilities.shape == (len(states), 8)
    assert np.allclose(pairs.reference_speedups, [r for _, r in want])
    by_parent = pairs_from_states(states, "parent")
    assert np.allclose(by_parent.reference_speedups, [s.parent_speedup for _, s in states])
