"""PUCT and island selection on hand-made archives."""
from __future__ import annotations

import math
import random

import pytest

from workbench.errors import ConfigError
from workbench.search.archive import MEASURED, TRUSTED, Archive, Entry
from workbench.search.selection import IslandSelector, PUCTSelector


def _e(cid, parent=None, speedup=1.0, status="ok", kind=MEASURED, island=0, visits=0):
    e = Entry(candidate_id=cid, parent_id=parent, generation=0, origin="t", kind=kind, status=status,
              speedup=speedup, island=island)
    e.visits = visits
    return e


def _archive(*entries):
    a = Archive()
    for e in entries:
        a.add(e)
    return a


def test_pure_exploitation_picks_best_subtree_not_best_node():
    # a is slow itself but its child is the fastest kernel; b is faster than a.
    a = _archive(_e("a", speedup=0.5), _e("b", speedup=1.5), _e("a1", "a", speedup=3.0, status="incorrect"),
                 _e("a2", "a", speedup=2.5))
    sel = PUCTSelector(c=0.0)
    s = sel.scores(a)
    assert s["a"] == pytest.approx(1.0) and s["a2"] == pytest.approx(1.0)
    assert set(s) == {"a", "b", "a2"}  # failures are not parents
    assert sel.select(a, random.Random(0), 1) in ("a", "a2")  # both have the best subtree value
    assert s["b"] == pytest.approx(0.0)


def test_visits_shift_choice_to_unvisited():
    a = _archive(_e("x", speedup=2.0, visits=50), _e("y", speedup=1.9))
    assert PUCTSelector(c=0.0).select(a, random.Random(0), 1) == "x"
    assert PUCTSelector(c=2.0, prior="uniform").select(a, random.Random(0), 1) == "y"


def test_exploration_term_matches_formula():
    a = _archive(_e("x", speedup=2.0, visits=3), _e("y", speedup=1.0, visits=1))
    s = PUCTSelector(c=1.5, prior="rank").scores(a)
    n = 4
    px, py = 1.0 / 1.5, 0.5 / 1.5  # rank weights 1 and 1/2, normalised
    assert s["x"] == pytest.approx(1.0 + 1.5 * px * math.sqrt(n + 1) / 4)
    assert s["y"] == pytest.approx(0.0 + 1.5 * py * math.sqrt(n + 1) / 2)


def test_trusted_entries_are_usable_and_all_failed_gives_none():
    a = _archive(_e("t", kind=TRUSTED, status="trusted", speedup=1.2))
    assert PUCTSelector().select(a, random.Random(0), 1) == "t"
    b = _archive(_e("f", status="compile_error", speedup=None))
    assert PUCTSelector().select(b, random.Random(0), 1) is None


def test_ties_broken_by_rng_deterministically():
    a = _archive(*[_e(c, speedup=1.0) for c in "abcd"])
    sel = PUCTSelector(c=0.0)
    picks = {sel.select(a, random.Random(s), 1) for s in range(20)}
    assert len(picks) > 1
    assert sel.select(a, random.Random(4), 1) == sel.select(a, random.Random(4), 1)


def test_islands_rotate_and_children_inherit():
    sel = IslandSelector(n_islands=2, migrate_every=0, puct=PUCTSelector(c=0.0))
    a = Archive()
    for i, (cid, s) in enumerate([("r0", 1.0), ("r1", 3.0)]):
        a.add(_e(cid, speedup=s, island=sel.island_of_child(a, None, i)))
    a.add(_e("c0", "r0", speedup=1.1, island=sel.island_of_child(a, "r0", 2)))
    assert a["c0"].island == a["r0"].island == 0 and a["r1"].island == 1
    assert sel.select(a, random.Random(0), 0) in ("r0", "c0")
    assert sel.select(a, random.Random(0), 1) == "r1"
    mig = IslandSelector(n_islands=2, migrate_every=1, puct=PUCTSelector(c=0.0))
    assert mig.select(a, random.Random(0), 0) == "r1"  # the global best migrates into island 0


def test_bad_config():
    with pytest.raises(ConfigError):
        PUCTSelector(prior="nope")
    with pytest.raises(ConfigError):
        IslandSelector(n_islands=0)
