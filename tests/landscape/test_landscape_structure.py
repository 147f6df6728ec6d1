"""Landscape structure metrics on hand-worked cases."""
from __future__ import annotations

import math
from math import comb

import pytest

from workbench.landscape.structure import median_first_hit, speed_clusters, structure
from workbench.records import Measurement, Status


def _m(i, s):
    if s is None:
        return Measurement(candidate_id=f"c{i}", problem_id="p", hardware_key="h", status=Status.INCORRECT)
    return Measurement(candidate_id=f"c{i}", problem_id="p", hardware_key="h", status=Status.OK,
                       reference_ms=1.0, candidate_ms=1.0 / s, speedup=s)


def test_speed_clusters_merge_within_the_tie():
    assert speed_clusters([1.0, 0.99, 0.97, 0.5]) == 3  # 1.0 and 0.99 tie; 0.97 is > 2% below 1.0
    assert speed_clusters([1.0] * 5) == 1
    assert speed_clusters([]) == 0


def test_median_first_hit_is_the_hypergeometric_median():
    assert median_first_hit(4, 1) == 2  # the good one is at 1..4 uniformly
    assert median_first_hit(10, 10) == 1
    assert median_first_hit(10, 0) is None
    n, k = 100, 3
    t = median_first_hit(n, k)
    p = lambda t: 1 - comb(n - k, t) / comb(n, t)  # noqa: E731 - P(a good one within the first t)
    assert p(t) >= 0.5 > p(t - 1)


def test_structure_counts_failures_in_the_random_order_budget():
    ms = [_m(0, 2.0), _m(1, 1.99), _m(2, 1.0), _m(3, None)]
    s = structure(ms, budget=64)
    assert s["correct"] == 3 and s["speed_clusters"] == 2
    assert s["within_tie_share"] == pytest.approx(2 / 4) and s["within_tie_share_correct"] == pytest.approx(2 / 3)
    assert s["spread"] == pytest.approx(2.0)
    assert s["random_order_budget_to_best"] == pytest.approx(median_first_hit(4, 2) / 64)
    assert s["random_order_budget_to_best_mean"] == pytest.approx(5 / 3 / 64)
    assert structure([_m(0, None)])["best_speedup"] is None


def test_repeatability_on_hand_worked_pairs():
    from workbench.landscape.structure import repeatability

    pairs = [(_m(0, 1.0), _m(0, 1.01)),   # ties (within 2%)
             (_m(1, 2.0), _m(1, 1.9)),    # 5% apart: no tie
             (_m(2, 1.0), _m(2, None)),   # status changed: not a correct pair
             (_m(3, None), _m(3, None))]  # failed twice: same status
    r = repeatability(pairs)
    assert r["pairs"] == 4 and r["same_status_share"] == 0.75 and r["both_correct"] == 2
    assert r["within_tie_share"] == 0.5
    assert r["abs_log_speedup_median"] == pytest.approx((abs(math.log(1.01)) + abs(math.log(0.95))) / 2)
    assert r["abs_log_speedup_p90"] == pytest.approx(abs(math.log(0.95)))
    empty = repeatability([])
    assert empty["pairs"] == 0 and empty["same_status_share"] is None and empty["within_tie_share"] is None
