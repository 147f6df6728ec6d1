"""The forecaster-as-perf_model adapter for Triton's autotuner, and the autotune benchmark's
interpreter smoke (CPU)."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import triton
import triton.language as tl

from workbench import bins
from workbench.families import get_family
from workbench.forecast.base import BatchForecaster
from workbench.landscape.autotune import (AutotuneMapError, ConfigPointMap, ForecastPerfModel, RandomPerfModel,
                                          matmul_tiled_map)
from workbench.problems import get_problem
from workbench.records import Forecast, Hardware, ParseStatus
from bench_scripts import load_bench

ROOT = Path(__file__).resolve().parents[2]
PID = "L1/14_matmul_square_fp32"
HW = Hardware(key="h100", name="h100", kind="replay")


@triton.jit
def _noop(x_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr):
    pass


class ByKey(BatchForecaster):
    """Test double: the expected log2 speedup is a fixed function of the point's parameters
    (read from the rendered candidate's origin), so the right order is known; `abstain` names
    point keys it abstains on."""

    name = "by-key"

    def __init__(self, score, abstain=()):
        self.score, self.abstain, self.batches = score, set(abstain), 0

    def forecast_batch(self, items, hardware, relative_to="reference", parents=None):
        self.batches += 1
        out = []
        for p, c in items:
            key = c.origin.rsplit(":", 1)[1]
            params = dict(kv.split("=") for kv in key.split(","))
            mu = self.score(params)
            probs = np.exp(-0.5 * ((np.asarray(bins.LOG2_MIDPOINTS) - mu) / 0.3) ** 2) + 1e-9
            out.append(Forecast(forecaster=self.name, candidate_id=c.id, problem_id=p.id, hardware_key=hardware.key,
                                probabilities=tuple(probs / probs.sum()), relative_to=relative_to,
                                parse_status=ParseStatus.ABSTAINED if key in self.abstain else ParseStatus.OK))
        return out


def _score(params):  # bigger tiles, more stages: "faster" (a made-up order)
    return (int(params["bm"]) * int(params["bn"])) / 65536 + 0.1 * int(params["stages"])


def test_config_point_round_trip_and_triton_configs():
    mp = matmul_tiled_map(get_family(PID))
    pts = mp.points()
    assert pts and all(mp.family.as_dict(pt)["algo"] == "tiled" and mp.family.as_dict(pt)["split"] == 1 for pt in pts)
    for pt in pts:
        vals = mp.config_values(pt)
        assert set(vals) == {"BM", "BN", "BK", "GROUP", "num_warps", "num_stages"}
        assert mp.point(vals) == pt
    cfgs = mp.configs(pts[:5])
    for pt, cfg in zip(pts[:5], cfgs):
        d = mp.family.as_dict(pt)
        assert cfg.kwargs == {"BM": d["bm"], "BN": d["bn"], "BK": d["bk"], "GROUP": d["group"]}
        assert (cfg.num_warps, cfg.num_stages) == (d["warps"], d["stages"])
        assert mp.point({**cfg.all_kwargs(), "x_ptr": None, "M": 64}) == pt  # extra kernel args are ignored


def test_map_must_cover_every_parameter_once():
    fam = get_family(PID)
    with pytest.raises(AutotuneMapError):
        ConfigPointMap(fam, {"bm": "BM"}, {"algo": "tiled"})
    with pytest.raises(AutotuneMapError):
        matmul_tiled_map(get_family("L1/01_softmax"))
    mp = matmul_tiled_map(fam)
    splitk = next(pt for pt in fam.points() if fam.as_dict(pt)["algo"] == "splitk")
    with pytest.raises(AutotuneMapError):
        mp.config_values(splitk)


def test_perf_model_orders_configs_as_the_forecaster_and_flags_unmapped_ones():
    mp = matmul_tiled_map(get_family(PID))
    pts = mp.points()[:30]
    fc = ByKey(_score)
    pm = ForecastPerfModel(fc, get_problem(PID), HW, mp, reference_ms=2.0)
    pm.prefetch(pts)
    assert fc.batches == 1
    est = [pm(**mp.config_values(pt)) for pt in pts]
    assert fc.batches == 1  # cached
    exp = [pm.expected_log2_speedup(pt) for pt in pts]
    assert all(e == pytest.approx(2.0 / 2 ** x) for e, x in zip(est, exp))
    assert np.argsort(est, kind="stable").tolist() == np.argsort([-x for x in exp], kind="stable").tolist()
    truth = [_score({k: str(v) for k, v in mp.family.as_dict(pt).items()}) for pt in pts]
    assert np.corrcoef(exp, truth)[0, 1] > 0.9
    bad = {**mp.config_values(pts[0]), "BM": 48}  # not a value of the family
    assert pm(**bad) == math.inf and pm.unmapped == 1
    with pytest.raises(AutotuneMapError):
        ForecastPerfModel(fc, get_problem("L1/15_matmul_square_bf16"), HW, mp)


def test_abstention_counts_as_no_speedup():
    mp = matmul_tiled_map(get_family(PID))
    pt = mp.points()[0]
    pm = ForecastPerfModel(ByKey(_score, abstain={mp.family.key(pt)}), get_problem(PID), HW, mp, reference_ms=3.0)
    assert pm(**mp.config_values(pt)) == 3.0


def test_tritons_pruner_keeps_the_forecasters_top_k():
    mp = matmul_tiled_map(get_family(PID))
    pts = mp.points()[:20]
    pm = ForecastPerfModel(ByKey(_score), get_problem(PID), HW, mp)
    tuner = triton.autotune(configs=mp.configs(pts), key=[], prune_configs_by={"perf_model": pm, "top_k": 3})(_noop)
    tuner.nargs = {"x_ptr": None}
    kept = tuner.prune_configs({})
    want = sorted(pts, key=lambda pt: -pm.expected_log2_speedup(pt))[:3]
    assert len(kept) == 3 and [mp.point(c.all_kwargs()) for c in kept] == want
    ctl = RandomPerfModel(0, mp.from_config.values())
    tuner = triton.autotune(configs=mp.configs(pts), key=[], prune_configs_by={"perf_model": ctl, "top_k": 3})(_noop)
    tuner.nargs = {"x_ptr": None}
    assert len(tuner.prune_configs({})) == 3
    v = mp.config_values(pts[0])
    assert ctl(**v) == RandomPerfModel(0, mp.from_config.values())(**v) != RandomPerfModel(1, mp.from_config.values())(**v)


def test_family_launcher_tunes_whole_family_points_in_the_interpreter(monkeypatch, tmp_path):
    """The benchmark's arms over a held-out family in the interpreter (CPU sizes): full autotuning
    benchmarks every config, a pruned arm only its perf model's top k, and every kept kernel
    computes what the reference does."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    bench = load_bench("autotune_bench")
    pid = "L1/03_gelu"  # held out; its cheapest points interpret in a fraction of a second
    speed, ids = bench.landscape_truth(bench.LANDSCAPES / "h200", "h200", [pid])
    case = bench.Case(pid, "cpu", True, speed, ids[pid])
    pts = case.sample(4, 0)
    assert len(pts) == 4 and all(math.isfinite(case.speed_of(p)) for p in pts)  # recorded correct
    compiled = bench.compile_pass([(pid, case.family.key(p), str(tmp_path), True) for p in pts], 1,
                                  tmp_path / "cache", True)
    assert set(compiled) == {(pid, case.family.key(p)) for p in pts} and not any(e for _, e in compiled.values())
    cs = {key: s for (_, key), (s, _) in compiled.items()}

    def by_block(params):
        return int(params["block"]) / 1024 + int(params["warps"]) / 64

    fc = ByKey(by_block)
    row = bench.run_problem(case, fc, HW, pts, [2], 1, 0, tmp_path, cs)
    assert row["full"]["benchmarked"] == 4
    assert row["forecaster@top2"]["benchmarked"] == 2 and row["random@top2#0"]["benchmarked"] == 2
    from workbench.landscape.autotune import ForecastPerfModel, family_map

    pm = ForecastPerfModel(fc, case.problem, HW, family_map(case.family))
    top = sorted(pts, key=lambda p: -pm.expected_log2_speedup(p))[:2]
    assert row["forecaster@top2"]["best"] in {case.family.key(p) for p in top}
    for name in ("full", "forecaster@top2", "random@top2#0"):
        a = row[name]
        assert a["rel_err"] < 1e-4 and a["kernel_ms"] > 0 and a["autotune_s"] >= a["tune_s"] > 0
    assert row["full"]["speed_vs_full"] == 1.0 and row["full"]["time_saved_share"] == 0.0
    m = bench.metrics([row], [2])
    assert m["problems"] == 1 and m["forecaster@top2"]["final_speed_vs_full_median"] == \
        row["forecaster@top2"]["speed_vs_full"]
    assert m["random@top2"]["autotune_time_saved_share"] == row["random@top2#0"]["time_saved_share"]
    out = tmp_path / "out"
    before = sorted(bench.RESULTS_DIR.glob("autotune-*.json"))
    assert bench.main(["--cpu", "--forecaster", "roofline", "--problems", pid, "--configs", "2", "--top-k", "1",
                       "--random-seeds", "1", "--out", str(out)]) == 0
    assert not out.exists() and sorted(bench.RESULTS_DIR.glob("autotune-*.json")) == before  # a smoke is no result
