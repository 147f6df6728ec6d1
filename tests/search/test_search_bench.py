"""benchmarks/search_bench.py on synthetic pools (never written to benchmarks/results)."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from conftest import ConfidencePolicy, NoisyOracleForecaster, synthetic_pool
from workbench.dataset.sources import RecordSet
from bench_scripts import load_bench

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "search_bench.py"
bench = load_bench("search_bench", _PATH)


def _records(n_problems=3):
    rs = RecordSet()
    for i in range(n_problems):
        p, c, m = synthetic_pool(f"L1/8{i}_synth", n=50, seed=10 + i)
        rs.problems.append(p)
        rs.candidates += c
        rs.measurements += m
    return rs


def test_benchmark_on_synthetic_pool_respects_budget_and_reports_all_metrics():
    rs = _records()
    results = bench.run_benchmark(rs, "h100", budget=10, seeds=[0, 1],
                                  forecaster_factory=lambda r, pid: NoisyOracleForecaster(r.measurements),
                                  k=2, m=3, method_kw={"selective": {"policy": ConfidencePolicy(0.6)},
                                                       "uncertainty_aware": {"policy": ConfidencePolicy(0.6)}})
    assert len(results) == 3 * 7 * 2  # four methods and three random-score controls
    assert all(r["gpu_measurements"] <= 10 for r in results)
    met = bench.metrics(results)
    assert set(met) == set(bench.REPLAY_METHODS)
    base = met["measure_all"]
    assert base["win_or_tie_rate_equal_budget"] == 1.0  # ties with itself
    assert base["budget_fraction_to_match_median"] is not None and 0 < base["budget_fraction_to_match_median"] <= 1
    for m in met.values():
        assert m["runs"] == 6 and m["gpu_measurements_max"] <= 10
        assert m["final_best_speedup_median"] > 0
    assert met["screen_topk"]["candidates_considered_mean"] > base["candidates_considered_mean"]
    # each run records how many forecasts stood in for a measurement: only the policy methods trust
    trusted = {meth: [r["trusted"] for r in results if r["method"] == meth] for meth in bench.METHODS}
    assert trusted["measure_all"] == trusted["screen_topk"] == [0] * 6
    assert sum(trusted["selective"]) > 0
    # each surrogate method carries its difference to its random control; the others do not
    for meth in bench.REPLAY_METHODS:
        has = "vs_random_diff" in met[meth]
        assert has == (meth in ("screen_topk", "selective", "uncertainty_aware")), meth
        if has:
            assert met[meth]["vs_random_pairs"] == 6
            lo, hi = met[meth]["vs_random_diff_ci"]
            assert lo <= met[meth]["vs_random_diff"] <= hi


def test_metrics_on_hand_made_results():
    def r(method, seed, best, curve, pid="P"):
        return {"problem_id": pid, "method": method, "seed": seed, "budget": 10, "best_speedup": best,
                "gpu_measurements": 10, "considered": 10, "curve": curve}
    results = [r("measure_all", 0, 2.0, [(5, 2.0)]), r("measure_all", 1, 1.0, [(8, 1.0)]),
               r("screen_topk", 0, 2.0, [(2, 1.6)]), r("screen_topk", 1, 1.5, [(3, 1.2), (6, 1.5)])]
    met = bench.metrics(results)
    # target = median(2.0, 1.0) = 1.5: baseline hits at 5 (seed 0) and never (seed 1)
    assert met["measure_all"]["budget_fraction_to_match_run_median"] is None  # median of (0.5, never)
    assert met["screen_topk"]["budget_fraction_to_match_run_median"] == pytest.approx((0.2 + 0.6) / 2)
    assert met["screen_topk"]["win_or_tie_run_rate"] == 1.0
    assert met["screen_topk"]["final_best_speedup_median"] == pytest.approx(1.75)
    assert met["measure_all"]["match_rate"] == 0.5
    # by problem (one problem here): seed ratios 2.0/2.0 and 1.5/1.0 -> median 1.25 >= 1, a win;
    # budget fractions (0.2, 0.6) -> 0.4; measure_all's (0.5, never) -> median never -> None
    assert met["screen_topk"]["problems"] == 1
    assert met["screen_topk"]["win_or_tie_rate_equal_budget"] == 1.0
    assert met["screen_topk"]["budget_fraction_to_match_median"] == pytest.approx(0.4)
    assert met["measure_all"]["budget_fraction_to_match_median"] is None
    # a second problem on which screen_topk loses on both seeds (ratios 0.5, 0.9): half the problems
    more = results + [r("measure_all", 0, 2.0, [(1, 2.0)], "Q"), r("measure_all", 1, 2.0, [(1, 2.0)], "Q"),
                      r("screen_topk", 0, 1.0, [(1, 1.0)], "Q"), r("screen_topk", 1, 1.8, [(1, 1.8)], "Q")]
    met2 = bench.metrics(more)
    assert met2["screen_topk"]["win_or_tie_rate_equal_budget"] == 0.5  # 1 of 2 problems
    assert met2["screen_topk"]["win_or_tie_run_rate"] == 0.5  # 2 of 4 runs
    # Q never reaches its target 2.0 (fractions never, never); P's median is 0.4: median of (0.4, never)
    assert met2["screen_topk"]["budget_fraction_to_match_median"] is None
    # a third problem won on both seeds makes the problem rate 2/3 while the run rate is 4/6
    three = more + [r("measure_all", 0, 1.0, [(4, 1.0)], "R"), r("measure_all", 1, 1.0, [(4, 1.0)], "R"),
                    r("screen_topk", 0, 1.2, [(2, 1.2)], "R"), r("screen_topk", 1, 0.9, [(1, 0.9)], "R")]
    met3 = bench.metrics(three)["screen_topk"]
    # R: ratios (1.2, 0.9) -> median 1.05, won; runs won: P 2, Q 0, R 1
    assert met3["win_or_tie_rate_equal_budget"] == pytest.approx(2 / 3)
    assert met3["win_or_tie_run_rate"] == pytest.approx(3 / 6)
    # per-problem budget medians: P 0.4, Q never, R median(0.2, never) = never -> median(0.4, inf, inf) = inf
    assert met3["budget_fraction_to_match_median"] is None
    # with a 10% tie tolerance Q's 0.9 seed ties, but its median ratio (0.7) still loses
    assert bench.metrics(more, tie_rel=0.1)["screen_topk"]["win_or_tie_rate_equal_budget"] == 0.5


def test_main_refuses_too_little_data(tmp_path):
    from workbench.dataset.shipped import write_shipped

    write_shipped(_records(2), tmp_path / "shipped")
    out = tmp_path / "out.json"
    assert bench.main(["--data", str(tmp_path / "shipped"), "--budget", "10", "--out", str(out)]) == 1
    assert not out.exists()


def test_live_mode_on_cpu_writes_only_to_out_dir_with_exact_budgets(tmp_path):
    """--live on the CPU interpreter: two methods, one problem, budget 3; measurements are real
    (interpreter timings), so only the structure and the budget accounting are checked."""
    out = tmp_path / "live"
    results = _PATH.parent / "results"
    before = {p.name: p.stat().st_mtime_ns for p in results.glob("*.json")}
    rc = bench.main(["--live", "--gpu", "cpu", "--problems", "L1/01_softmax", "--seeds", "1", "--budget", "3",
                     "--max-seeds", "1", "--k", "2", "--m", "2", "--methods", "measure_all,screen_topk",
                     "--forecaster", "roofline", "--out", str(out)])
    assert rc == 0
    assert {p.name: p.stat().st_mtime_ns for p in results.glob("*.json")} == before  # CPU never writes there
    doc = json.loads((out / "search-cpu.json").read_text())
    assert doc["gpu"] == "cpu" and set(doc["metrics"]) == {"live", "live_strict"}
    live, det = doc["metrics"]["live"], doc["live"]
    assert set(live) == {"measure_all", "screen_topk"}
    for m in live.values():
        assert {"budget_fraction_to_match_median", "win_or_tie_rate_equal_budget",
                "final_best_speedup_median"} <= set(m)
        assert m["runs"] == 1
    assert live["measure_all"]["win_or_tie_rate_equal_budget"] == 1.0
    assert det["problems"] == ["L1/01_softmax"] and det["budget"] == 3 and det["skipped"] == []
    assert det["hardware"]["key"] == "cpu" and det["completed"] == 2
    assert len(det["runs"]) == 2
    for r in det["runs"]:
        ran_dry = r["finish_reason"].startswith(bench.RAN_DRY)
        assert r["gpu_measurements"] == 3 or (ran_dry and r["gpu_measurements"] < 3)
        assert r["budget_exact"] is True and r["wall_s"] > 0
        assert all(used <= r["gpu_measurements"] for used, _ in r["curve"])
    assert det["gpu_measurements_used"] == sum(r["gpu_measurements"] for r in det["runs"])
    # screen_topk considered more candidates than it measured (m * k children per step)
    st = next(r for r in det["runs"] if r["method"] == "screen_topk")
    assert st["considered"] > st["gpu_measurements"]


def test_budget_exact_and_live_metrics_use_complete_problem_seed_pairs():
    def r(method, used, reason, pid="P", seed=0, best=1.0):
        return {"problem_id": pid, "method": method, "seed": seed, "budget": 4, "gpu_measurements": used,
                "finish_reason": reason, "best_speedup": best, "considered": used, "curve": [(1, best)]}
    assert bench.budget_exact(r("measure_all", 4, "budget spent"))
    assert bench.budget_exact(r("measure_all", 2, "exhausted: the generator proposes no new candidates"))
    assert not bench.budget_exact(r("measure_all", 2, "budget spent"))
    assert not bench.budget_exact(r("measure_all", 5, "budget spent"))
    runs = [r("measure_all", 4, "budget spent"), r("screen_topk", 4, "budget spent", best=2.0),
            r("measure_all", 4, "budget spent", pid="Q")]  # Q: screen_topk skipped by the time guard
    met = bench.live_metrics(runs, ["measure_all", "screen_topk"])
    assert met["measure_all"]["runs"] == 1 and met["screen_topk"]["runs"] == 1
    assert met["screen_topk"]["final_best_speedup_median"] == 2.0


# --------------------------------------------------------------------------- live: parallel, merge, ties
def _replay_live(rs, parallel, seeds=(0, 1), budget=8, **kw):
    """run_live on synthetic pools answered by a CacheExecutor (deterministic, no GPU)."""
    from workbench.execution.executors import CacheExecutor
    from workbench.search import ReplayGenerator

    ex = CacheExecutor(rs.measurements, "h100")
    by_pid = {p.id: [c for c in rs.candidates if c.problem_id == p.id] for p in rs.problems}
    fits: list[str] = []

    def factory(records, pid):
        fits.append(pid)
        return NoisyOracleForecaster(records.measurements)

    out = bench.run_live(rs, rs.problems, ex, list(seeds), budget, kw.pop("factory", factory),
                         methods=["measure_all", "screen_topk"], k=2, m=2, max_seeds=2, progress=False,
                         parallel=parallel, generator_factory=lambda p: ReplayGenerator(by_pid[p.id], ex.candidate_ids),
                         **kw)
    return out, fits


@pytest.mark.parametrize("parallel", [2, 4, 8])
def test_parallel_live_gives_the_serial_results_in_plan_order(parallel):
    """2 problems x 2 seeds x 2 methods: runs searched at once give the serial runs, and each
    problem's forecaster is fitted once even when several of its runs start together."""
    rs = _records(2)
    serial, fits1 = _replay_live(rs, parallel=1)
    par, fits2 = _replay_live(rs, parallel=parallel)
    assert serial["skipped"] == par["skipped"] == [] and serial["failed"] == par["failed"] == []
    keys = [(r["seed"], r["problem_id"], r["method"]) for r in par["runs"]]
    assert keys == [(s, p.id, m) for s in (0, 1) for p in rs.problems for m in ("measure_all", "screen_topk")]
    assert len(par["runs"]) == 8 and par["parallel"] == parallel
    for a, b in zip(serial["runs"], par["runs"]):
        for key in ("problem_id", "method", "seed", "best_speedup", "gpu_measurements", "considered", "curve",
                    "finish_reason"):
            assert a[key] == b[key], key
        assert b["budget_exact"] and b["gpu_measurements"] == 8
    # one fit per problem in either mode
    assert sorted(fits1) == sorted(fits2) == sorted(p.id for p in rs.problems)


def test_parallel_live_records_a_failing_problem_and_keeps_the_others():
    rs = _records(2)
    bad = rs.problems[0].id

    def factory(records, pid):
        if pid == bad:
            raise ValueError("no rows")
        return NoisyOracleForecaster(records.measurements)

    out, _ = _replay_live(rs, parallel=2, factory=factory)
    assert {r["problem_id"] for r in out["runs"]} == {rs.problems[1].id} and len(out["runs"]) == 4
    assert len(out["failed"]) == 4 and all(f["problem_id"] == bad for f in out["failed"])
    assert all("forecaster fit failed: ValueError: no rows" in f["error"] for f in out["failed"])


def test_time_guard_applies_to_every_thread():
    out, fits = _replay_live(_records(2), parallel=2, budget_s=0.0)
    assert out["runs"] == [] and out["failed"] == [] and fits == []
    assert len(out["skipped"]) == 8


def test_deadline_stops_the_runs_in_flight_and_keeps_the_finished_ones():
    """--deadline-s: runs still going at the deadline are stopped after their step and listed as
    skipped with the measurements they had spent; runs that ended before it are kept whole."""
    import time as _time

    from workbench.execution.executors import CacheExecutor
    from workbench.search import ReplayGenerator

    rs = _records(2)
    ex = CacheExecutor(rs.measurements, "h100")
    by_pid = {p.id: [c for c in rs.candidates if c.problem_id == p.id] for p in rs.problems}
    slow_pid = rs.problems[1].id

    class Slow(ReplayGenerator):
        def children(self, ctx):
            _time.sleep(2.0)
            return super().children(ctx)

    def gen(p):
        cls = Slow if p.id == slow_pid else ReplayGenerator
        return cls(by_pid[p.id], ex.candidate_ids)

    out = bench.run_live(rs, rs.problems, ex, [0], 8, lambda r, pid: NoisyOracleForecaster(r.measurements),
                         methods=["measure_all", "screen_topk"], k=2, m=2, max_seeds=2, progress=False,
                         parallel=4, generator_factory=gen, deadline_s=3.0)
    fast = [r for r in out["runs"] if r["problem_id"] != slow_pid]
    assert len(fast) == 2 and all(r["budget_exact"] and r["gpu_measurements"] == 8 for r in fast)
    assert out["runs"] == fast and out["failed"] == []
    stopped = out["skipped"]
    assert [(r["problem_id"], r["method"]) for r in stopped] == [(slow_pid, "measure_all"), (slow_pid, "screen_topk")]
    assert all(0 < r["stopped_at"] < 8 for r in stopped)
    assert out["seconds"] < 5.5  # a slow run whole takes 6+ s (three steps of 2 s after its seeds)


def test_metrics_tie_tolerance_on_a_hand_made_case():
    def r(method, best, curve):
        return {"problem_id": "P", "method": method, "seed": 0, "budget": 10, "best_speedup": best,
                "gpu_measurements": 10, "considered": 10, "curve": curve}
    # screen_topk ends 0.5% below measure_all; it reaches 1.990 after 3 measurements
    results = [r("measure_all", 2.0, [(4, 1.5), (9, 2.0)]), r("screen_topk", 1.99, [(3, 1.99)])]
    strict, tolerant = bench.metrics(results), bench.metrics(results, tie_rel=0.01)
    assert strict["screen_topk"]["win_or_tie_rate_equal_budget"] == 0.0
    assert strict["screen_topk"]["budget_fraction_to_match_median"] is None  # never reaches 2.0
    assert tolerant["screen_topk"]["win_or_tie_rate_equal_budget"] == 1.0
    assert tolerant["screen_topk"]["budget_fraction_to_match_median"] == pytest.approx(0.3)
    assert tolerant["measure_all"]["budget_fraction_to_match_median"] == pytest.approx(0.9)
    # 1.5% below is a loss at 1%
    assert bench.metrics([results[0], r("screen_topk", 1.97, [(3, 1.97)])],
                         tie_rel=0.01)["screen_topk"]["win_or_tie_rate_equal_budget"] == 0.0
    with pytest.raises(bench.ConfigError):
        bench.metrics(results, tie_rel=-0.1)


def _live_run(pid, method, seed, best):
    return {"problem_id": pid, "method": method, "seed": seed, "budget": 4, "gpu_measurements": 4,
            "best_speedup": best, "considered": 8, "finish_reason": "budget spent", "budget_exact": True,
            "wall_s": 1.0, "curve": [(4, best)]}


_SETTINGS = {"budget": 4, "k": 2, "m": 2, "max_seeds": 1, "forecaster": "roofline", "generator": "mutation (zoo seeds)",
             "methods": ["measure_all", "screen_topk"]}


def _call(seeds, commit="abc"):
    return {"commit": commit, "date": "2026-11-23", "device": "cuda:0", "problems": ["P"], "seeds": seeds}


def test_tie_tolerance_comes_from_the_gpu_types_executor_repeat(tmp_path):
    (tmp_path / "executor-h100.json").write_text(json.dumps({"metrics": {"triton_per_min_cold": 88.4}}))
    tie, src = bench.live_tie_tolerance("h100", tmp_path)
    assert tie == 0.0 and src["file"] is None and "executor-h100.json" in src["note"]
    (tmp_path / "executor-h100.json").write_text(json.dumps({"metrics": {"cross_process_diff_pct_median": 0.5}}))
    tie, src = bench.live_tie_tolerance("h100", tmp_path)
    assert tie == pytest.approx(0.005) and src["gpu"] == "h100" and src["file"].endswith("executor-h100.json")
    # another GPU type's record never stands in
    assert bench.live_tie_tolerance("h200", tmp_path)[0] == 0.0
    assert bench.live_tie_tolerance("a100", tmp_path / "none")[0] == 0.0


def test_merge_adds_runs_replaces_same_key_and_reports_strict_and_tolerant(tmp_path):
    from workbench.records import Hardware

    (tmp_path / "executor-h100.json").write_text(json.dumps({"metrics": {"cross_process_diff_pct_median": 1.0}}))
    hw = Hardware(key="h100", name="H100")
    doc = {"benchmark": "search", "gpu": "h100", "metrics": {"measure_all": {"runs": 60}}}
    first = {"runs": [_live_run("P", "measure_all", 0, 2.0), _live_run("P", "screen_topk", 0, 1.99)],
             "skipped": [{"problem_id": "P", "method": "measure_all", "seed": 1}], "failed": []}
    bench.merge_live(doc, _SETTINGS, _call([0]), first, hw, results_dir=tmp_path)
    assert doc["metrics"]["measure_all"] == {"runs": 60}  # replay metrics untouched
    assert doc["metrics"]["live_strict"]["screen_topk"]["win_or_tie_rate_equal_budget"] == 0.0
    assert doc["metrics"]["live"]["screen_topk"]["win_or_tie_rate_equal_budget"] == 1.0
    assert doc["live"]["tie_rel"] == pytest.approx(0.01) and doc["live"]["tie_rel_source"]["gpu"] == "h100"
    assert len(doc["live"]["skipped"]) == 1
    # second call: seed 1 added, and seed 0's screen_topk measured again (replaces the recorded run)
    second = {"runs": [_live_run("P", "measure_all", 1, 1.0), _live_run("P", "screen_topk", 1, 1.2),
                       _live_run("P", "screen_topk", 0, 1.5)], "skipped": [], "failed": []}
    bench.merge_live(doc, dict(_SETTINGS, methods=["screen_topk", "measure_all"]), _call([0, 1], "def"), second, hw,
                     results_dir=tmp_path)
    live = doc["live"]
    assert [(r["seed"], r["method"]) for r in live["runs"]] == [(0, "measure_all"), (0, "screen_topk"),
                                                                 (1, "measure_all"), (1, "screen_topk")]
    assert next(r for r in live["runs"] if r["seed"] == 0 and r["method"] == "screen_topk")["best_speedup"] == 1.5
    assert [c["runs"] for c in live["calls"]] == [2, 3] and [c["replaced"] for c in live["calls"]] == [0, 1]
    assert [r["call"] for r in live["runs"]] == [0, 1, 1, 1]
    assert live["seeds"] == [0, 1] and live["skipped"] == [] and live["completed"] == 4
    assert live["gpu_measurements_used"] == 16 and live["commit"] == "def"
    assert doc["metrics"]["live"]["screen_topk"]["runs"] == 2
    assert doc["metrics"]["live"]["screen_topk"]["win_or_tie_run_rate"] == 0.5  # 1.5 < 2.0, 1.2 > 1.0
    # the one problem: median of the ratios 0.75 and 1.2 is 0.975, more than 1% below 1: not won
    assert doc["metrics"]["live"]["screen_topk"]["win_or_tie_rate_equal_budget"] == 0.0
    # a run skipped by two calls in a row is listed once
    skip = {"problem_id": "P", "method": "screen_topk", "seed": 2}
    for _ in range(2):
        bench.merge_live(doc, _SETTINGS, _call([2]), {"runs": [], "skipped": [skip], "failed": []}, hw,
                         results_dir=tmp_path)
    assert doc["live"]["skipped"] == [skip]


def test_merge_refuses_other_settings_unless_replace_live(tmp_path):
    from workbench.records import Hardware

    hw = Hardware(key="h100", name="H100")
    doc = {"metrics": {}}
    one = {"runs": [_live_run("P", "measure_all", 0, 2.0), _live_run("P", "screen_topk", 0, 2.1)],
           "skipped": [], "failed": []}
    bench.merge_live(doc, _SETTINGS, _call([0]), one, hw, results_dir=tmp_path)
    with pytest.raises(bench.ConfigError, match="budget 4 .*vs 8.*--replace-live"):
        bench.merge_live(doc, dict(_SETTINGS, budget=8), _call([1]), one, hw, results_dir=tmp_path)
    assert len(doc["live"]["calls"]) == 1
    # a subset of the methods is no other setting: its runs are added, the section keeps the union
    more = {"runs": [_live_run("P", "screen_topk", 1, 1.0)], "skipped": [], "failed": []}
    bench.merge_live(doc, dict(_SETTINGS, methods=["screen_topk"]), _call([1]), more, hw, results_dir=tmp_path)
    assert doc["live"]["methods"] == ["measure_all", "screen_topk"] and len(doc["live"]["runs"]) == 3
    bench.merge_live(doc, dict(_SETTINGS, budget=8), _call([0]), one, hw, replace=True, results_dir=tmp_path)
    assert doc["live"]["budget"] == 8 and len(doc["live"]["calls"]) == 1 and len(doc["live"]["runs"]) == 2
    # runs recorded before the methods' policy rules were a setting are not pooled with new ones
    del doc["live"]["policy"]
    with pytest.raises(bench.ConfigError, match="policy .*own forecasts \\(16 or more\\)"):
        bench.merge_live(doc, dict(_SETTINGS, budget=8, policy=bench.POLICY_RULES), _call([1]), one, hw,
                         results_dir=tmp_path)


def test_archive_as_restarts_only_the_method_whose_rule_changed(tmp_path):
    from workbench.records import Hardware

    hw = Hardware(key="h100", name="H100")
    methods = ["measure_all", "screen_topk", "uncertainty_aware"]
    old_rule = dict(_SETTINGS, methods=methods)  # no uncertainty_aware_rule: recorded before it existed
    doc = {"metrics": {}}
    first = {"runs": [_live_run("P", m, s, b) for s in (0, 1) for m, b in zip(methods, (2.0, 2.1, 1.5))],
             "skipped": [{"problem_id": "P", "method": "uncertainty_aware", "seed": 2}], "failed": []}
    bench.merge_live(doc, old_rule, _call([0, 1]), first, hw, results_dir=tmp_path)
    assert doc["metrics"]["live"]["uncertainty_aware"]["win_or_tie_rate_equal_budget"] == 0.0
    new_rule = dict(old_rule, uncertainty_aware_rule=bench.UA_RULES["no_gain"])
    with pytest.raises(bench.ConfigError, match="uncertainty_aware_rule .*--archive-as NAME.*uncertainty_aware only"):
        bench.merge_live(copy.deepcopy(doc), new_rule, _call([0]), first, hw, results_dir=tmp_path)
    # another setting differs too: archiving one method cannot cover it
    with pytest.raises(bench.ConfigError, match="budget differ"):
        bench.archive_and_restart(copy.deepcopy(doc), dict(new_rule, budget=8), "x", "h100", tmp_path)
    with pytest.raises(bench.ConfigError, match="nothing to restart"):
        bench.archive_and_restart(copy.deepcopy(doc), old_rule, "x", "h100", tmp_path)
    assert bench.archive_and_restart(doc, new_rule, "ua_policy_rule", "h100", tmp_path) == ["uncertainty_aware"]
    arch, live = doc["live_ua_policy_rule"], doc["live"]
    assert len(arch["runs"]) == 6 and len(arch["skipped"]) == 1  # the section as it was
    assert doc["metrics"]["live_ua_policy_rule"]["uncertainty_aware"]["runs"] == 2
    assert {r["method"] for r in live["runs"]} == {"measure_all", "screen_topk"} and live["skipped"] == []
    assert live["uncertainty_aware_rule"] == bench.UA_RULES["no_gain"] and live["gpu_measurements_used"] == 16
    assert doc["metrics"]["live"] == {}  # no complete pair until uncertainty_aware is re-run
    with pytest.raises(bench.ConfigError, match="exists"):
        bench.archive_and_restart(doc, new_rule, "ua_policy_rule", "h100", tmp_path)
    # new-rule runs are added to the kept ones; the restart is recorded and survives merging
    again = {"runs": [_live_run("P", "uncertainty_aware", 0, 2.2)], "skipped": [], "failed": []}
    bench.merge_live(doc, dict(new_rule, methods=["uncertainty_aware"]), _call([0]), again, hw, results_dir=tmp_path)
    live = doc["live"]
    assert len(live["runs"]) == 5 and live["restarted"][0]["archived_as"] == "live_ua_policy_rule"
    assert doc["metrics"]["live"]["uncertainty_aware"]["runs"] == 1
    assert doc["metrics"]["live"]["uncertainty_aware"]["win_or_tie_rate_equal_budget"] == 1.0
    assert bench.rescore(doc, "h100", tmp_path)  # the archived section is rescored from its runs
    assert doc["metrics"]["live_ua_policy_rule"]["uncertainty_aware"]["runs"] == 2


def test_live_cli_refuses_mismatched_settings_before_measuring(tmp_path, monkeypatch):
    from workbench.records import Hardware

    class FakeGPU:
        hardware = Hardware(key="h100", name="H100")

        def close(self):
            pass

    results = tmp_path / "results"
    results.mkdir()
    doc = {"benchmark": "search", "gpu": "h100", "metrics": {},
           "live": {**_SETTINGS, "budget": 12, "runs": [_live_run("P", "measure_all", 0, 1.0)]}}
    (results / "search-h100.json").write_text(json.dumps(doc))
    before = (results / "search-h100.json").read_text()
    monkeypatch.setattr(bench, "RESULTS_DIR", results)
    monkeypatch.setattr(bench, "live_executor", lambda gpu: FakeGPU())

    def must_not_run(*a, **kw):
        raise AssertionError("measured despite mismatched settings")

    monkeypatch.setattr(bench, "run_live", must_not_run)
    rc = bench.main(["--live", "--gpu", "cuda:0", "--budget", "4", "--k", "2", "--m", "2", "--max-seeds", "1",
                     "--forecaster", "roofline", "--methods", "measure_all,screen_topk", "--seeds", "1"])
    assert rc == 2
    assert (results / "search-h100.json").read_text() == before


def test_parallel_live_on_cpu_covers_the_plan_with_exact_budgets(tmp_path):
    """--live --parallel 2 on the CPU interpreter: two problems searched at once, sharing one
    executor; timings are real (so not compared), coverage and budget accounting are."""
    out = tmp_path / "live"
    rc = bench.main(["--live", "--gpu", "cpu", "--problems", "L1/01_softmax,L1/02_relu", "--seeds", "1",
                     "--seed-offset", "3", "--budget", "2", "--max-seeds", "1", "--k", "1", "--m", "2",
                     "--methods", "measure_all,screen_topk", "--forecaster", "roofline", "--parallel", "2",
                     "--out", str(out)])
    assert rc == 0
    det = json.loads((out / "search-cpu.json").read_text())["live"]
    assert [(r["problem_id"], r["method"], r["seed"]) for r in det["runs"]] == [
        (p, m, 3) for p in ("L1/01_softmax", "L1/02_relu") for m in ("measure_all", "screen_topk")]
    assert det["skipped"] == [] and det["failed"] == [] and det["seeds"] == [3]
    assert det["calls"][0]["parallel"] == 2 and det["calls"][0]["seeds"] == [3]
    assert all(r["budget_exact"] for r in det["runs"])
    assert det["gpu_measurements_used"] == sum(r["gpu_measurements"] for r in det["runs"]) > 0


def test_rescore_live_recomputes_tolerance_and_both_metrics_without_measuring(tmp_path):
    path = tmp_path / "search-h100.json"
    runs = [_live_run("P", "measure_all", 0, 2.0), _live_run("P", "screen_topk", 0, 1.999)]
    path.write_text(json.dumps({"metrics": {"live": {"stale": True}}, "live": {**_SETTINGS, "runs": runs}}))
    assert bench.main(["--rescore", "--gpu", "h100", "--out", str(path)]) == 0
    doc = json.loads(path.read_text())
    tie, src = bench.live_tie_tolerance("h100")
    assert doc["live"]["tie_rel"] == tie and doc["live"]["tie_rel_source"] == src
    assert doc["metrics"]["live_strict"]["screen_topk"]["win_or_tie_rate_equal_budget"] == 0.0
    expected = 1.0 if tie >= 0.0005 else 0.0  # 1.999 is 0.05% below 2.0
    assert doc["metrics"]["live"]["screen_topk"]["win_or_tie_rate_equal_budget"] == expected
    assert bench.main(["--rescore", "--gpu", "h100", "--out", str(tmp_path / "none.json")]) == 2


def test_rescore_recomputes_replay_and_archived_live_sections(tmp_path):
    """Every metric comes back from the recorded runs: the replay's (exact and tolerant, with the
    tolerance on disk), and an archived live section's with its own recorded tolerance."""
    (tmp_path / "executor-h100.json").write_text(json.dumps({"metrics": {"cross_process_diff_pct_median": 0.5}}))
    replay = [_live_run("P", "measure_all", 0, 2.0), _live_run("P", "screen_topk", 0, 1.995),
              _live_run("Q", "measure_all", 0, 1.0), _live_run("Q", "screen_topk", 0, 1.1)]
    old_live = [_live_run("P", "measure_all", 0, 2.0), _live_run("P", "screen_topk", 0, 1.98)]
    doc = {"metrics": {"screen_topk": {"stale": True}, "live_old": {"stale": True}},
           "replay_runs": replay, "live_old": {**_SETTINGS, "runs": old_live, "tie_rel": 0.02}}
    written = bench.rescore(doc, "h100", tmp_path)
    assert set(written) == {"measure_all", "screen_topk", "replay_tolerant", "live_old", "live_strict_old"}
    assert doc["metrics"]["screen_topk"]["win_or_tie_rate_equal_budget"] == 0.5  # Q won, P 0.25% short
    assert doc["metrics"]["replay_tolerant"]["screen_topk"]["win_or_tie_rate_equal_budget"] == 1.0
    assert doc["setup"]["tie_rel"] == pytest.approx(0.005)
    assert doc["metrics"]["live_old"]["screen_topk"]["win_or_tie_rate_equal_budget"] == 1.0  # 1% within 2%
    assert doc["metrics"]["live_strict_old"]["screen_topk"]["win_or_tie_rate_equal_budget"] == 0.0
    assert doc["live_old"]["per_problem"]["P"]["screen_topk"]["mean"] == pytest.approx(1.98)
    assert bench.rescore({"metrics": {}}, "h100", tmp_path) == []


def test_live_spread_per_problem_over_complete_pairs_only():
    runs = [_live_run("P", "measure_all", 0, 2.0), _live_run("P", "screen_topk", 0, 1.0),
            _live_run("P", "measure_all", 1, 4.0), _live_run("P", "screen_topk", 1, 3.0),
            _live_run("P", "measure_all", 2, 9.0)]  # seed 2 lacks screen_topk: left out
    spread = bench.live_spread(runs, ["measure_all", "screen_topk"])
    ma = spread["P"]["measure_all"]
    assert ma["seeds"] == [0, 1] and ma["mean"] == pytest.approx(3.0) and ma["min"] == 2.0 and ma["max"] == 4.0
    assert ma["sd"] == pytest.approx(2 ** 0.5)  # sample sd of (2, 4)
    assert spread["P"]["screen_topk"]["mean"] == pytest.approx(2.0)
    one = bench.live_spread(runs[:2], ["measure_all", "screen_topk"])
    assert one["P"]["measure_all"]["sd"] is None


def test_replay_doc_reports_exact_and_tolerant_ties_and_keeps_the_runs(tmp_path):
    (tmp_path / "executor-h100.json").write_text(json.dumps({"metrics": {"cross_process_diff_pct_median": 0.5}}))
    runs = [_live_run("P", "measure_all", 0, 2.0), _live_run("P", "screen_topk", 0, 1.995),
            _live_run("Q", "measure_all", 0, 1.0), _live_run("Q", "screen_topk", 0, 0.9)]
    doc = bench.replay_doc(runs, "h100", {"mode": "replay", "budget": 4}, results_dir=tmp_path)
    # 1.995 is 0.25% below 2.0: a loss when exact, a tie within the 0.5% repeat difference
    assert doc["metrics"]["screen_topk"]["win_or_tie_rate_equal_budget"] == 0.0
    assert doc["metrics"]["replay_tolerant"]["screen_topk"]["win_or_tie_rate_equal_budget"] == 0.5
    assert doc["setup"]["tie_rel"] == pytest.approx(0.005) and doc["setup"]["budget"] == 4
    assert doc["setup"]["tie_rel_source"]["file"].endswith("executor-h100.json")
    assert doc["replay_runs"] == runs and doc["gpu"] == "h100"
    # no executor record for the GPU type: the tolerant metrics are the exact ones
    strict = bench.replay_doc(runs, "h200", {}, results_dir=tmp_path)
    assert strict["setup"]["tie_rel"] == 0.0
    assert strict["metrics"]["replay_tolerant"] == bench.metrics(runs)
    assert strict["metrics"]["replay_tolerant"]["screen_topk"]["win_or_tie_rate_equal_budget"] == 0.0


def test_parallel_jobs_give_the_same_runs_as_one_job():
    rs = _records()
    kw = dict(budget=8, seeds=[0, 1], forecaster_factory=bench.roofline_factory, k=2, m=3,
              methods=("measure_all", "screen_topk"))
    one = bench.run_benchmark(rs, "h100", **kw)
    two = bench.run_benchmark(rs, "h100", jobs=2, **kw)
    assert len(one) == 3 * 2 * 2
    assert [(r["problem_id"], r["method"], r["seed"], r["best_speedup"], r["curve"]) for r in one] == \
        [(r["problem_id"], r["method"], r["seed"], r["best_speedup"], r["curve"]) for r in two]
    with pytest.raises(bench.ConfigError, match="--jobs"):
        bench.run_benchmark(rs, "h100", jobs=0, **kw)


def _close(a, b) -> bool:
    """Nested dicts / lists / numbers equal, numbers to 1e-9 relative."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return a == pytest.approx(b, rel=1e-9, abs=1e-12)
    return a == b


def test_committed_search_results_are_what_their_recorded_runs_give():
    """benchmarks/results/search-h100.json: every metric (replay, live, archived live sections)
    recomputed from the runs the file records equals the committed value, every live run's
    budget is exact and each live problem x seed pair that is scored has all four methods."""
    path = bench.RESULTS_DIR / "search-h100.json"
    if not path.exists():
        pytest.skip("no committed search-h100.json")
    doc = json.loads(path.read_text())
    fresh = copy.deepcopy(doc)
    written = bench.rescore(fresh, "h100")
    assert {"live", "live_strict", "replay_tolerant", *bench.METHODS} <= set(written)
    for key in written:
        assert _close(fresh["metrics"][key], doc["metrics"][key]), key
    live = doc["live"]
    assert live["budget_exact_all"] and all(bench.budget_exact(r) for r in live["runs"])
    assert sum(r["gpu_measurements"] for r in live["runs"]) == live["gpu_measurements_used"]
    complete = bench.complete_runs(live["runs"])
    assert doc["metrics"]["live"]["measure_all"]["runs"] == len(complete) // len(bench.METHODS)
