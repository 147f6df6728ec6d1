"""workbench.landscape.orders: the reference orders and their best-so-far curves."""
from __future__ import annotations

import math
from dataclasses import dataclass

import pytest

from workbench.landscape.orders import (best_so_far, censored, forecast_scores, global_best,
                                        measurements_to_within, random_order, ranked_order, share_of_best)

IDS = ["a", "b", "c", "d", "e"]
SPEED = {"a": 1.0, "b": float("nan"), "c": 2.0, "d": 0.5, "e": 1.99}


def test_ranked_order_sorts_by_score_and_keeps_input_order_on_ties_and_missing_scores():
    scores = {"a": 0.1, "b": 0.5, "c": 0.5, "d": float("nan"), "e": -1.0}
    assert ranked_order(IDS, scores) == ["b", "c", "a", "e", "d"]
    assert ranked_order(["x", "a", "x"], {"a": 1.0}) == ["a", "x"]


def test_random_order_is_a_seeded_permutation_independent_of_input_order():
    a = random_order(IDS, seed=3, salt="L1/01")
    assert sorted(a) == sorted(IDS)
    assert random_order(list(reversed(IDS)), seed=3, salt="L1/01") == a
    orders = {tuple(random_order(IDS, seed=s, salt="L1/01")) for s in range(20)}
    assert len(orders) > 5  # different seeds give different orders
    assert random_order(IDS, seed=3, salt="L1/02") != a or random_order(IDS, seed=4, salt="L1/02") != \
        random_order(IDS, seed=4, salt="L1/01")


def test_best_so_far_skips_failures_and_respects_the_budget():
    curve = best_so_far(["b", "d", "a", "c", "e"], SPEED)
    assert math.isnan(curve[0]) and curve[1:] == [0.5, 1.0, 2.0, 2.0]
    assert best_so_far(["b", "d", "a", "c", "e"], SPEED, budget=2)[1] == 0.5
    assert len(best_so_far(IDS, SPEED, budget=99)) == len(IDS)
    assert math.isnan(best_so_far(["zz"], SPEED)[0])  # an unknown id is a failed measurement


def test_scores_against_the_global_best():
    best = global_best(SPEED)
    assert best == 2.0 and global_best(SPEED, ["a", "d"]) == 1.0 and math.isnan(global_best({"b": None}))
    curve = best_so_far(["d", "a", "e", "c"], SPEED)
    assert share_of_best(curve, best, 1) == 0.25 and share_of_best(curve, best, 2) == 0.5
    assert share_of_best(curve, best, 99) == 1.0  # read at the end when the space is used up
    assert share_of_best([float("nan")], best, 1) == 0.0
    assert measurements_to_within(curve, best) == 3  # 1.99 is within 2% of 2.0
    assert measurements_to_within(curve, best, rel=0.0) == 4
    assert measurements_to_within(curve, best, budget=2) is None
    assert censored(None, 8) == 9 and censored(3, 8) == 3 and censored(12, 8) == 9
    with pytest.raises(ValueError):
        share_of_best(curve, float("nan"), 1)


@dataclass
class _F:
    abstained: bool
    expected_log2_speedup: float


@dataclass
class _C:
    id: str


class _Fc:
    def __init__(self):
        self.calls = 0

    def forecast_batch(self, items, hardware, relative_to="reference"):
        self.calls += 1
        assert relative_to == "reference"
        return [_F(c.id == "b", {"a": 1.0, "b": 9.0, "c": -0.5}[c.id]) for _, c in items]


def test_forecast_scores_batches_once_and_scores_an_abstention_as_no_speedup():
    fc = _Fc()
    scores = forecast_scores(fc, "problem", [_C("a"), _C("b"), _C("c")], "hw")
    assert fc.calls == 1 and scores == {"a": 1.0, "b": 0.0, "c": -0.5}
    assert ranked_order(["c", "b", "a"], scores) == ["a", "b", "c"]
