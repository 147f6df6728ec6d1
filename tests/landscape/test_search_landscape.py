"""benchmarks/search_landscape.py on SYNTHETIC landscapes (never written to benchmarks/results)."""
from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

from workbench.families import get_family
from workbench.landscape import enumerate_landscape, write_landscapes
from workbench.problems import get_problem
from workbench.records import Measurement, Status
from bench_scripts import load_bench

ROOT = Path(__file__).resolve().parents[2]
bench = load_bench("search_landscape")

HELD, TRAIN, TRAIN_B = "L1/08_max_rows", "L1/07_sum_rows", "L1/01_softmax"


def _synthetic(land, seed):
    rng = random.Random(seed)
    out = []
    for c in land.candidates:
        s = rng.lognormvariate(0, 0.6)
        out.append(Measurement(candidate_id=c.id, problem_id=land.problem_id, hardware_key="h100", status=Status.OK,
                               reference_ms=1.0, candidate_ms=1.0 / s, speedup=s, reason="synthetic"))
    return out


@pytest.fixture(scope="module")
def ship(tmp_path_factory):
    d = tmp_path_factory.mktemp("synthetic_landscapes")
    lands, ms = [], []
    for pid, seed in ((HELD, 1), (TRAIN, 2), (TRAIN_B, 3)):
        fam = get_family(pid)
        common = dict(block=[256, 512, 1024], rows=[1, 2], warps=[1, 2, 4], stages=[1, 3])
        fam = (fam.restricted(algo=["online", "threepass"], exp=["exp"], **common) if pid == TRAIN_B else
               fam.restricted(algo=["loop_vec", "loop_scalar"], acc=["fp32"], **common))
        land = enumerate_landscape(fam)
        lands.append(land)
        ms += _synthetic(land, seed)
    write_landscapes(d, lands, [get_problem(HELD), get_problem(TRAIN), get_problem(TRAIN_B)], ms)
    return d


def test_replay_scores_every_method_and_budget(ship, tmp_path):
    out = tmp_path / "out"
    assert bench.main(["--landscapes", str(ship), "--gpu", "h100", "--budgets", "8,16", "--seeds", "2",
                       "--forecaster", "roofline", "--trust-folds", "2", "--trust-parents", "8",
                       "--cv-folds", "2", "--cv-seeds", "1", "--cv-budget", "8", "--out", str(out)]) == 0
    doc = json.loads((out / "search-landscape-h100.json").read_text())
    assert doc["setup"]["synthetic"] is True and doc["setup"]["heldout_searched"] == [HELD]
    assert not (bench.RESULTS_DIR / "search-landscape-h100.json").exists()
    m = doc["metrics"]
    assert set(m) == {f"{x}@{b}" for x in (*bench.METHODS, *bench.ORDERS) for b in (8, 16)}
    # every method is scored against the landscape's global best, recomputed here from the runs
    from workbench.dataset.shipped import load_shipped
    from workbench.landscape.truth import best_at, to_within

    best = max(x.speedup for x in load_shipped(ship).measurements if x.problem_id == HELD and x.ok)
    assert doc["setup"]["global_best"] == {HELD: best}
    for key, block in m.items():
        method, b = key.rsplit("@", 1)
        rs = [r for r in doc["runs"] if r["method"] == method and r["budget"] == int(b)]
        shares = sorted(best_at(r["curve"], int(b)) / best for r in rs)
        within = sorted(to_within(r["curve"], best, int(b)) for r in rs)
        assert block["global_best_share_median"] == pytest.approx((shares[0] + shares[1]) / 2)
        assert block["to_within2pct_median"] == pytest.approx((within[0] + within[1]) / 2)
        assert all(1 <= w <= int(b) + 1 for w in within) and len(block["global_best_share_median_ci"]) == 2
        if method != "ranked_order":
            assert block["vs_ranked_order"]["pairs"] == 2
    ranked = [r for r in doc["runs"] if r["method"] == "ranked_order"]
    assert ranked[0]["curve"] == ranked[1]["curve"]  # one order, counted once per seed
    space = doc["setup"]["space_search"]
    assert space["choice"]["chosen"] in space["variants"] and HELD not in space["cv_problems"]
    assert HELD not in sum(space["choice"]["folds"], [])
    # certified_skip's calibration folds are the space search's CV folds: one fit per fold serves both
    assert sorted(map(sorted, doc["setup"]["certified_skip"]["folds"])) == sorted(space["choice"]["folds"])
    assert space["space_skip"]["reference"] == "best" and HELD not in space["space_skip"]["problems"]
    acc = doc["acceptance"]["space_search"]
    assert acc["global_best_share_median"] == m["space_search@16"]["global_best_share_median"]
    assert acc["no_more_measurements_than_ranked_order"] == (
        m["space_search@16"]["to_within2pct_median"] <= m["ranked_order@16"]["to_within2pct_median"])
    assert set(doc["acceptance"]["space_skip"]) == {"8", "16"}
    fit = doc["setup"]["forecaster_fit"]
    assert fit["protocol_sha256"] == doc["setup"]["protocol"]["sha256"] and HELD not in fit["training_problems"]
    for b in (8, 16):
        base = m[f"measure_all@{b}"]
        assert base["final_best_ratio_median"] == 1.0 and base["runs"] == 2
        assert 0 < base["budget_fraction_to_match_median"] <= 1  # measure_all reaches its own best
        s = m[f"screen_topk@{b}"]
        assert "vs_random_diff" in s and s["vs_random_pairs"] == 2
        assert "vs_random_diff" not in m[f"screen_topk[random]@{b}"]
        assert 0 <= m[f"uncertainty_aware@{b}"]["trusted_share"] <= 1
        skip = m[f"certified_skip@{b}"]
        assert 0 <= skip["trusted_share"] <= 1 and skip["trusted_risk_target"] == 0.1
        assert skip["trusted_risk_observed"] is None or 0 <= skip["trusted_risk_observed"] <= 1
        assert skip["vs_screen_topk_final_best_ratio_median"] > 0 and "budget_fraction_to_match_median" in skip
    for name, other in (("uncertainty_aware", "screen_topk"), ("uncertainty_aware[random]", "screen_topk[random]"),
                        ("certified_skip", "screen_topk")):
        for b in (8, 16):
            ours = {(r["problem_id"], r["seed"]): r["curve"] for r in doc["runs"] if r["method"] == name and r["budget"] == b}
            theirs = {(r["problem_id"], r["seed"]): r["curve"] for r in doc["runs"] if r["method"] == other and r["budget"] == b}
            want = sum(ours[k] == theirs[k] for k in ours) / len(ours)
            assert m[f"{name}@{b}"]["same_best_curve_as_screen_topk_share"] == want
    cal = doc["setup"]["certified_skip"]
    assert cal["target_risk"] == 0.1 and cal["folds"] and HELD not in sum(cal["folds"], [])
    runs = doc["runs"]
    assert all(r["gpu_measurements"] <= r["budget"] for r in runs)


def test_replay_is_exact_and_fits_on_training_problems_only(ship, monkeypatch):
    seen = {}
    real = bench.FORECASTERS["roofline"]

    def spy(records, searched):
        seen["problems"] = {x.problem_id for x in records.measurements}
        return real(records, searched)

    monkeypatch.setitem(bench.FORECASTERS, "roofline", spy)
    proto = bench.load_protocol()
    a, info = bench.run_searches(ship, "h100", [8], [0], proto, "roofline", methods=("measure_all", "screen_topk"))
    lands = bench.read_landscapes(ship)
    assert info["training_landscapes_measured"] == {p: f"{len(lands[p].points)}/{len(lands[p].points)}"
                                                    for p in (TRAIN, TRAIN_B)}  # named, never the held-out one
    b, _ = bench.run_searches(ship, "h100", [8], [0], proto, "roofline", methods=("measure_all", "screen_topk"))
    assert a == b
    assert seen["problems"] == {TRAIN, TRAIN_B}  # the held-out problem's rows never reach the fit


def oracle_as_learned(ship, forecasters: dict, monkeypatch) -> list[set[str]]:
    """Register, as "learned" in `forecasters`, a test double that knows the shipped landscapes'
    speedups up to noise (test_certified_skip.NoisyOracle, sigma 0.3). Returns the list that
    each fit appends its records' problem ids to."""
    from workbench.dataset.shipped import load_shipped

    sys.path.insert(0, str(ROOT / "tests" / "landscape"))
    from test_certified_skip import NoisyOracle

    speed = {m.candidate_id: (m.speedup if m.ok else float("nan")) for m in load_shipped(ship).measurements}
    fits: list[set[str]] = []

    def oracle(records, searched):
        fits.append({m.problem_id for m in records.measurements})
        return NoisyOracle(speed, sigma=0.3)

    monkeypatch.setitem(forecasters, "learned", oracle)
    return fits


def test_certified_skip_reports_its_observed_risk_from_the_recorded_speedups(ship, tmp_path, monkeypatch):
    """With a forecaster that knows the landscape up to noise (a test double) the rule trusts
    children; the observed risk is recomputed here from the stored measurements."""
    # the double stands in for the learned forecaster: a search spec names registered forecasters only
    fits = oracle_as_learned(ship, bench.FORECASTERS, monkeypatch)
    out = tmp_path / "out"
    assert bench.main(["--landscapes", str(ship), "--gpu", "h100", "--budgets", "16", "--seeds", "3",
                       "--forecaster", "learned", "--methods", "measure_all,screen_topk,certified_skip",
                       "--trust-folds", "2", "--trust-risk", "0.2", "--trust-delta", "0.2", "--out", str(out)]) == 0
    doc = json.loads((out / "search-landscape-h100.json").read_text())
    assert all(HELD not in f for f in fits) and len(fits) == 3  # the search's fit and one per fold
    skip = doc["metrics"]["certified_skip@16"]
    runs = [r for r in doc["runs"] if r["method"] == "certified_skip"]
    assert skip["trusted_share"] > 0 and skip["trusted_children"] == sum(r["trusted"] for r in runs)
    assert skip["trusted_risk_observed"] == sum(r["trusted_beat_parent"] for r in runs) / skip["trusted_children"]
    assert skip["trusted_risk_target"] == 0.2
    lo, hi = skip["trusted_risk_observed_ci"]
    assert lo <= skip["trusted_risk_observed"] <= hi and skip["offered"] == (hi <= 0.2)
    assert skip["trusted_share_ci"][0] <= skip["trusted_share"] <= skip["trusted_share_ci"][1]
    assert all(r["gpu_measurements"] == 16 for r in runs)


def test_certified_skip_best_judges_trusted_children_against_the_run_best(ship, tmp_path, monkeypatch):
    """certified_skip_best: calibrated and checked against the search's best so far; its observed
    risk is the share of trusted children that beat the run's best when trusted."""
    oracle_as_learned(ship, bench.FORECASTERS, monkeypatch)
    out = tmp_path / "out"
    assert bench.main(["--landscapes", str(ship), "--gpu", "h100", "--budgets", "16", "--seeds", "3",
                       "--forecaster", "learned", "--methods", "measure_all,screen_topk,certified_skip_best",
                       "--trust-folds", "2", "--trust-risk", "0.2", "--trust-delta", "0.2", "--out", str(out)]) == 0
    doc = json.loads((out / "search-landscape-h100.json").read_text())
    assert doc["setup"]["certified_skip_best"]["reference"] == "best" and "certified_skip" not in doc["setup"]
    assert doc["setup"]["post_hoc_methods"] == []  # only on h200 was it added after the results
    skip = doc["metrics"]["certified_skip_best@16"]
    runs = [r for r in doc["runs"] if r["method"] == "certified_skip_best"]
    assert skip["trusted_share"] > 0 and skip["trusted_children"] == sum(r["trusted"] for r in runs)
    assert all(r["trusted_beat_reference"] == r["trusted_beat_best"] for r in runs)
    assert skip["trusted_risk_observed"] == skip["trusted_beat_best_share"] == \
        sum(r["trusted_beat_best"] for r in runs) / skip["trusted_children"]
    assert all(r["gpu_measurements"] == 16 for r in runs)


def test_same_curve_share_compares_each_run_with_its_counterpart():
    """Hand-made runs: one of two curves matches screen_topk's; a run with no counterpart is left out."""
    def run(method, seed, curve, pid="p"):
        return {"method": method, "problem_id": pid, "seed": seed, "budget": 8, "curve": curve}

    runs = [run("screen_topk", 0, [[1, 1.0], [2, 1.5]]), run("screen_topk", 1, [[1, 1.0]]),
            run("uncertainty_aware", 0, [[1, 1.0], [2, 1.5]]), run("uncertainty_aware", 1, [[1, 1.2]]),
            run("uncertainty_aware", 0, [[1, 1.0]], pid="q")]
    ua = [r for r in runs if r["method"] == "uncertainty_aware"]
    assert bench._same_curve_share(ua, runs, "screen_topk") == 0.5
    assert bench._same_curve_share(ua, runs, "measure_all") is None


def test_only_held_out_landscapes_measured_whole_are_searched(tmp_path):
    """A held-out landscape with an unmeasured point is skipped and named; none whole: refused."""
    fam = get_family(HELD).restricted(algo=["loop_vec"], acc=["fp32"], block=[256, 512], rows=[1], warps=[1, 2],
                                      stages=[1])
    land = enumerate_landscape(fam)
    ms = _synthetic(land, 5)
    write_landscapes(tmp_path, [land], [get_problem(HELD)], ms[:-1])  # the last point unmeasured
    with pytest.raises(SystemExit, match="measured whole"):
        bench.run_searches(tmp_path, "h100", [8], [0], bench.load_protocol(), "roofline", methods=("measure_all",))
    whole = tmp_path / "whole"
    write_landscapes(whole, [land], [get_problem(HELD)], ms)
    runs, info = bench.run_searches(whole, "h100", [8], [0], bench.load_protocol(), "roofline",
                                    methods=("measure_all",))
    assert info["heldout_searched"] == [HELD] and info["heldout_partial_skipped"] == {} and runs
