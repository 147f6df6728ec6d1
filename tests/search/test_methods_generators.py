"""Method plans, expected improvement, and the replay / LLM generators' pure parts."""
from __future__ import annotations

import random

import numpy as np
import pytest

from conftest import ConfidencePolicy
from workbench import bins
from workbench.errors import ConfigError
from workbench.records import Candidate, Forecast, Measurement, Status
from workbench.search.generators import GenerationContext, ReplayGenerator, extract_module, render_prompt
from workbench.search.methods import (MethodContext, expected_improvement, make_method, no_gain_confidence,
                                      no_gain_level, no_gain_losses)


def _c(i):
    return Candidate.from_source("P", f"class ModelNew:\n    V = {i}\n")


def _f(c, b, conf=0.8, p_fail=None):
    p = [(1 - conf) / 7] * 8
    p[b] = conf
    return Forecast("t", c.id, "P", "h100", tuple(p), p_fail=p_fail)


def test_screen_topk_measures_best_k_by_expected():
    kids = [_c(i) for i in range(6)]
    fc = {c.id: _f(c, b) for c, b in zip(kids, [1, 6, 3, 7, 0, 5])}
    plan = make_method("screen_topk", k=2, m=3).plan(kids, fc, MethodContext(1.0, 10))
    assert plan.measure == [kids[3].id, kids[1].id] and len(plan.drop) == 4


def test_selective_defers_until_calibrated_then_trusts_confident():
    kids = [_c(i) for i in range(6)]
    fc = {c.id: _f(c, 4, conf=0.9 if i % 2 else 0.3) for i, c in enumerate(kids)}
    m = make_method("selective", k=2, m=3, policy_factory=lambda: ConfidencePolicy(0.6), min_calibration=3)
    plan = m.plan(kids, fc, MethodContext(1.0, 10, history=[]))
    assert plan.trust == [] and len(plan.measure) == 2  # not calibrated: behaves like screen_topk
    hist = [(fc[kids[0].id], Measurement(kids[0].id, "P", "h100", Status.OK, speedup=1.2))] * 3
    plan = m.plan(kids, fc, MethodContext(1.0, 10, history=hist))
    assert set(plan.trust) == {kids[i].id for i in (1, 3, 5)}
    assert set(plan.measure) <= {kids[i].id for i in (0, 2, 4)} and len(plan.measure) == 2


def test_selective_measures_at_least_one_when_all_trusted():
    kids = [_c(i) for i in range(4)]
    fc = {c.id: _f(c, 5, conf=0.95) for c in kids}
    plan = make_method("selective", k=2, m=2, policy=ConfidencePolicy(0.5)).plan(kids, fc, MethodContext(1.0, 5))
    assert len(plan.measure) == 1 and len(plan.trust) == 3


def test_expected_improvement():
    c = _c(0)
    sure_slow = _f(c, 0, conf=1.0)
    assert expected_improvement(sure_slow, 1.0) == 0.0
    sure_fast = _f(c, 6, conf=1.0)
    assert expected_improvement(sure_fast, 1.0) == pytest.approx(bins.MIDPOINTS[6] - 1.0)
    assert expected_improvement(_f(c, 6, conf=1.0, p_fail=0.5), 1.0) == pytest.approx((bins.MIDPOINTS[6] - 1) / 2)
    assert expected_improvement(sure_fast, 4.0) < expected_improvement(sure_fast, 1.0)


def test_uncertainty_aware_trusts_only_confident_no_gain_and_measures_unsure_or_promising():
    kids = [_c(i) for i in range(5)]
    fc = {kids[0].id: _f(kids[0], 2, conf=1.0),   # confident, no gain over 1.5x: trusted
          kids[1].id: _f(kids[1], 7, conf=0.5),   # unsure, promising
          kids[2].id: _f(kids[2], 5, conf=0.5),   # unsure, promising
          kids[3].id: _f(kids[3], 3, conf=1.0),   # confident, no gain: trusted
          kids[4].id: _f(kids[4], 6, conf=1.0)}   # confident and promising: measured all the same
    assert expected_improvement(fc[kids[0].id], 1.5) == 0.0 == expected_improvement(fc[kids[3].id], 1.5)
    for rank, first in (("ei", kids[1]), ("expected", kids[4])):
        plan = make_method("uncertainty_aware", k=4, m=2, policy=ConfidencePolicy(0.99), rank=rank, trust_rule="policy").plan(
            kids, fc, MethodContext(1.5, 10))
        assert set(plan.measure) == {kids[i].id for i in (1, 2, 4)} and plan.measure[0] == first.id
        assert set(plan.trust) == {kids[0].id, kids[3].id} and plan.drop == []  # budget left goes on
    # an unsure no-gain forecast is not trusted: it competes for a measurement like the rest
    unsure_slow = {c.id: _f(c, 2, conf=0.5) for c in kids[:2]}
    plan = make_method("uncertainty_aware", k=2, m=1, policy=ConfidencePolicy(0.99), trust_rule="policy").plan(
        kids[:2], unsure_slow, MethodContext(1.5, 10))
    assert sorted(plan.measure) == sorted(c.id for c in kids[:2]) and plan.trust == []
    # without a calibrated policy nothing is trusted: the top k by expected speedup, as screen_topk
    never = make_method("uncertainty_aware", k=2, m=3, policy_factory=lambda: ConfidencePolicy(0.99),
                        min_calibration=10**6, trust_rule="policy")
    screen = make_method("screen_topk", k=2, m=3)
    assert never.plan(kids, fc, MethodContext(1.5, 10)).measure == screen.plan(kids, fc, MethodContext(1.5, 10)).measure


def test_uncertainty_aware_measures_at_least_one_when_every_child_is_confident_no_gain():
    kids = [_c(i) for i in range(3)]
    fc = {c.id: _f(c, b, conf=1.0) for c, b in zip(kids, (0, 2, 1))}
    plan = make_method("uncertainty_aware", k=2, m=2, policy=ConfidencePolicy(0.9), trust_rule="policy").plan(
        kids, fc, MethodContext(2.0, 10))
    assert plan.measure == [kids[1].id] and plan.trust == [kids[2].id, kids[0].id]


def test_uncertainty_aware_rank_orders_by_ei_or_by_expected_speedup():
    a, b = _c(0), _c(1)
    fc = {a.id: _f(a, 5, conf=1.0),  # surely 1.68x: EI over 1.5x small, expected high
          b.id: _f(b, 2, conf=0.5)}  # probably 0.6x, but 1/14 on each faster bin: larger EI
    ctx = MethodContext(1.5, 10)
    assert expected_improvement(fc[b.id], 1.5) > expected_improvement(fc[a.id], 1.5)
    assert fc[a.id].expected_log2_speedup > fc[b.id].expected_log2_speedup
    kw = dict(k=1, m=2, policy_factory=lambda: ConfidencePolicy(0.99), min_calibration=10**6, trust_rule="policy")
    assert make_method("uncertainty_aware", rank="ei", **kw).plan([a, b], fc, ctx).measure == [b.id]
    assert make_method("uncertainty_aware", **kw).plan([a, b], fc, ctx).measure == [a.id]  # default
    with pytest.raises(ConfigError, match="rank"):
        make_method("uncertainty_aware", rank="random")


def test_uncertainty_aware_can_measure_improvement_over_the_best_so_far():
    kids = [_c(i) for i in range(3)]
    # sure 1.68x (bin 5), sure 2.83x (bin 6), sure 5.66x (bin 7)
    fc = {c.id: _f(c, b, conf=1.0) for c, b in zip(kids, (5, 6, 7))}
    kw = dict(k=3, m=1, policy=ConfidencePolicy(0.99), trust_rule="policy")
    ctx = MethodContext(1.0, 10, best_speedup=3.0)  # parent 1x, best so far 3x
    over_parent = make_method("uncertainty_aware", **kw).plan(kids, fc, ctx)
    over_best = make_method("uncertainty_aware", improve_over="best", **kw).plan(kids, fc, ctx)
    assert over_parent.measure == [kids[2].id, kids[1].id, kids[0].id]  # all beat the parent
    assert over_best.measure == [kids[2].id]  # only the 5.66x one can beat 3x
    assert over_best.trust == [kids[1].id, kids[0].id]
    assert over_best.scores[kids[2].id] == pytest.approx((bins.MIDPOINTS[7] - 3.0) / 3.0)
    # no correct measurement yet: the best is unknown, gains are counted from 1x
    none_yet = make_method("uncertainty_aware", improve_over="best", **kw).plan(kids, fc, MethodContext(2.0, 10))
    assert none_yet.scores[kids[0].id] == pytest.approx(bins.MIDPOINTS[5] - 1.0)
    assert make_method("uncertainty_aware", improve_over="best").describe()["improve_over"] == "best"
    with pytest.raises(ConfigError, match="improve_over"):
        make_method("uncertainty_aware", improve_over="grandparent")


def test_replay_generator_prefers_recorded_children_then_same_problem():
    root = Candidate.from_source("P", "class ModelNew:\n    V = 'r'\n")
    kids = [Candidate.from_source("P", f"class ModelNew:\n    V = {i}\n", parent_id=root.id, generation=1)
            for i in range(3)]
    other = [Candidate.from_source("P", f"class ModelNew:\n    W = {i}\n", parent_id="elsewhere") for i in range(3)]
    foreign = Candidate.from_source("Q", "class ModelNew:\n    Z = 1\n")
    gen = ReplayGenerator([root, *kids, *other, foreign])
    from workbench.records import Problem
    prob = Problem(id="P", level=1, name="p", source="")
    assert {c.id for c in gen.seeds(prob)} == {root.id, *(o.id for o in other)}
    ctx = GenerationContext(prob, root, 2, random.Random(0), seen={root.id})
    first = gen.children(ctx)
    assert len(first) == 2 and all(c.parent_id == root.id for c in first)
    ctx = GenerationContext(prob, root, 5, random.Random(0), seen={root.id, *(k.id for k in kids)})
    rest = gen.children(ctx)
    assert {c.id for c in rest} == {o.id for o in other}  # fallback: same problem, never Q


def test_extract_module_takes_last_valid_block():
    text = ("Plan.\n```python\nclass ModelNew(:\n```\nBetter:\n```python\nimport torch\n"
            "class ModelNew(torch.nn.Module):\n    pass\n```\n")
    assert "torch.nn.Module" in extract_module(text)
    assert extract_module("```python\nclass Model:\n    pass\n```") is None
    assert extract_module("truncated\n```python\nclass ModelNew:\n    pass\n") is not None
    assert render_prompt("a $x {b}", x="1") == "a 1 {b}"


def _held_out_set(n=40):
    """Held-out forecasts: n sure (0.9) and right, n unsure (0.3) and wrong."""
    import numpy as np

    sure = np.full(8, 0.1 / 7)
    sure[4] = 0.9
    unsure = np.full(8, 0.7 / 7)
    unsure[4] = 0.3
    return np.vstack([np.tile(sure, (n, 1)), np.tile(unsure, (n, 1))]), np.r_[[4] * n, [6] * n]


def test_policy_methods_calibrate_on_the_forecasters_held_out_set_from_the_first_step():
    kids = [_c(i) for i in range(6)]
    fc = {c.id: _f(c, 4, conf=0.9 if i % 2 else 0.3) for i, c in enumerate(kids)}
    sel = make_method("selective", k=2, m=3)  # the default policy: the conformal controller
    assert sel.plan(kids, fc, MethodContext(1.0, 10)).trust == []  # no history, no set: defer all
    plan = make_method("selective", k=2, m=3).plan(kids, fc, MethodContext(1.0, 10, calibration=_held_out_set()))
    assert set(plan.trust) == {kids[i].id for i in (1, 3, 5)} and len(plan.measure) == 2
    # uncertainty_aware: the sure forecasts (bin 4, 1.19x) are no gain over a 4x parent: trusted
    ua = make_method("uncertainty_aware", k=2, m=3, trust_rule="policy").plan(
        kids, fc, MethodContext(4.0, 10, calibration=_held_out_set()))
    assert set(ua.trust) == {kids[i].id for i in (1, 3, 5)}
    assert set(ua.measure) | set(ua.drop) == {kids[i].id for i in (0, 2, 4)}
    # a held-out set on which the sure forecasts are wrong as often as not certifies nothing
    probs, y = _held_out_set()
    y[:20] = 6
    plan = make_method("selective", k=2, m=3).plan(kids, fc, MethodContext(1.0, 10, calibration=(probs, y)))
    assert plan.trust == []


def test_policy_is_recalibrated_with_the_held_out_set_as_the_history_grows():
    calls = []

    class Recording(ConfidencePolicy):
        def calibrate_with(self, prior, forecasts, measurements):
            calls.append((len(prior[0]), len(forecasts)))
            return self

    kids = [_c(i) for i in range(2)]
    fc = {c.id: _f(c, 4, conf=0.9) for c in kids}
    m = make_method("selective", k=2, m=1, policy_factory=lambda: Recording(0.6), min_calibration=100)
    hist = [(fc[kids[0].id], Measurement(kids[0].id, "P", "h100", Status.OK, speedup=1.2))]
    for h in ([], [], hist, hist * 2):
        m.plan(kids, fc, MethodContext(1.0, 10, history=h, calibration=_held_out_set(5)))
    assert calls == [(10, 0), (10, 1), (10, 2)]  # once per history length, below min_calibration too


def test_no_gain_level_rounds_the_gain_threshold_down_to_a_bin_edge():
    assert no_gain_level(1.3, 0.02) == 3   # 1.326x -> edge 1.0 ("S <= 1.0" implies no gain)
    assert no_gain_level(1.4, 0.02) == 4   # 1.428x -> edge 1.41
    assert no_gain_level(0.9, 0.02) == 2   # 0.918x -> edge 0.71
    assert no_gain_level(0.2, 0.02) is None  # below the lowest edge: no level, nothing certifiable
    p = np.array([0.1, 0.2, 0.3, 0.1, 0.1, 0.1, 0.05, 0.05])
    assert no_gain_confidence(p, 3) == pytest.approx(0.7)
    assert no_gain_losses([2, 3, 4, 7], 3).tolist() == [0.0, 0.0, 1.0, 1.0]


def _slow_fast_set(n=200, wrong=0):
    """Held-out forecasts: n sure-slow ones (0.9 on bin 1, 0.5-0.71x) and n unsure ones (spread);
    the sure-slow ones are right except `wrong` of them, which were in fact 1.41-2x (bin 4)."""
    sure = np.full(8, 0.1 / 7)
    sure[1] = 0.9
    unsure = np.full(8, 1 / 8)
    y_sure = np.r_[[1] * (n - wrong), [4] * wrong]
    return np.vstack([np.tile(sure, (n, 1)), np.tile(unsure, (n, 1))]), np.r_[y_sure, np.arange(n) % 8]


def test_uncertainty_aware_trusts_certified_no_gain_children_and_measures_the_rest():
    kids = [_c(i) for i in range(6)]
    # even children: sure-slow forecasts (bin 1); odd: unsure, spread over the bins
    fc = {c.id: (_f(c, 1, conf=0.9) if i % 2 == 0 else Forecast("t", c.id, "P", "h100", (1 / 8,) * 8))
          for i, c in enumerate(kids)}
    ua = make_method("uncertainty_aware", k=2, m=3, trust_rule="no_gain")
    assert ua.describe()["trust_rule"] == "no_gain"
    assert make_method("uncertainty_aware").describe()["trust_rule"] == "policy"  # the default
    plan = ua.plan(kids, fc, MethodContext(1.3, 10, calibration=_slow_fast_set()))
    assert set(plan.trust) == {kids[i].id for i in (0, 2, 4)}
    assert set(plan.measure) == {kids[1].id, kids[3].id} and plan.drop == [kids[5].id]
    # the same sure-slow forecasts, but on held-out data they missed a gain one time in three:
    # no threshold keeps the missed-gain rate <= 0.1, nothing is trusted, screen_topk's plan
    fooled = make_method("uncertainty_aware", k=2, m=3, trust_rule="no_gain").plan(
        kids, fc, MethodContext(1.3, 10, calibration=_slow_fast_set(wrong=70)))
    screen = make_method("screen_topk", k=2, m=3).plan(kids, fc, MethodContext(1.3, 10))
    assert fooled.trust == [] and fooled.measure == screen.measure
    # no calibration data and a short history: nothing is certified
    assert make_method("uncertainty_aware", k=2, m=3, trust_rule="no_gain").plan(
        kids, fc, MethodContext(1.3, 10)).trust == []
    # a parent so slow that no bin edge lies below it: nothing can be certified as no gain
    assert make_method("uncertainty_aware", k=2, m=3, trust_rule="no_gain").plan(
        kids, fc, MethodContext(0.2, 10, calibration=_slow_fast_set())).trust == []


def test_uncertainty_aware_no_gain_certificate_learns_from_the_search_history():
    kids = [_c(i) for i in range(4)]
    fc = {c.id: _f(c, 1, conf=0.9) for c in kids}
    # history only (no held-out set): 40 sure-slow forecasts that were right
    hist = [(_f(_c(100 + i), 1, conf=0.9),
             Measurement(_c(100 + i).id, "P", "h100", Status.OK, speedup=0.6)) for i in range(40)]
    ua = make_method("uncertainty_aware", k=2, m=2, min_calibration=16, trust_rule="no_gain")
    plan = ua.plan(kids, fc, MethodContext(1.3, 10, history=hist))
    assert len(plan.trust) == 3 and len(plan.measure) == 1  # every child certified; min_measure 1
    # the same forecasts were 1.6x in fact: the certificate fails, nothing is trusted
    bad = [(f, Measurement(m.candidate_id, "P", "h100", Status.OK, speedup=1.6)) for f, m in hist]
    assert make_method("uncertainty_aware", k=2, m=2, min_calibration=16, trust_rule="no_gain").plan(
        kids, fc, MethodContext(1.3, 10, history=bad)).trust == []


def test_uncertainty_aware_no_gain_risk_holds_on_exchangeable_data():
    """Over many draws of calibration and test forecasts from one distribution, the share of
    trusted test children that would in fact have gained stays <= no_gain_risk in >= 1 - delta
    of the draws (up to sampling slack)."""
    rng = np.random.default_rng(0)
    alpha, delta, level = 0.1, 0.1, 3

    def draw(n):
        # true bin uniform over 0..7; forecasts put 0.4 on the true bin and spread the rest,
        # with a random sharpness so confidence varies
        y = rng.integers(0, 8, n)
        noise = rng.dirichlet(np.ones(8), n)
        w = rng.uniform(0.1, 0.9, n)[:, None]
        p = (1 - w) * noise
        p[np.arange(n), y] += w[:, 0]
        return p, y

    ok = 0
    draws = 200
    for _ in range(draws):
        cal_p, cal_y = draw(400)
        ua = make_method("uncertainty_aware", k=1, m=1, no_gain_risk=alpha, delta=delta, trust_rule="no_gain")
        thr = ua.no_gain_threshold(level, [], (cal_p, cal_y))
        test_p, test_y = draw(2000)
        covered = no_gain_confidence(test_p, level) >= (thr if thr is not None else np.inf)
        risk = no_gain_losses(test_y[covered], level).mean() if covered.any() else 0.0
        ok += risk <= alpha
    assert thr is not None  # the certificate is not vacuous here
    assert ok / draws >= 1 - delta - 0.05


def test_uncertainty_aware_without_backfill_saves_a_trusted_childs_measurement():
    kids = [_c(i) for i in range(6)]
    # the best-ranked child (bin 5, 1.68x) is a sure no-gain over a 2.9x parent (the test policy trusts it)
    fc = {c.id: _f(c, b, conf=c_) for c, b, c_ in zip(kids, (5, 4, 3, 3, 2, 2), (0.99, 0.5, 0.5, 0.5, 0.5, 0.5))}
    kw = dict(k=2, m=3, policy=ConfidencePolicy(0.9), trust_rule="policy")
    ctx = MethodContext(2.9, 10)
    fill = make_method("uncertainty_aware", **kw).plan(kids, fc, ctx)
    save = make_method("uncertainty_aware", backfill=False, **kw).plan(kids, fc, ctx)
    assert fill.trust == save.trust == [kids[0].id]
    assert fill.measure == [kids[1].id, kids[2].id]  # the next-ranked child takes the trusted one's place
    assert save.measure == [kids[1].id]  # only the untrusted among the top 2: one measurement saved
    assert make_method("uncertainty_aware", backfill=False).describe()["backfill"] is False
