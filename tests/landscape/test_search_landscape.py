"""benchmarks/search_landscape.py on SYNTHETIC landscapes (never written to benchmarks/results)."""
from __future__ import annotations

import importlib.util
import json
import random
import sys
from pathlib import Path

import pytest

from workbench.families import get_family
from workbench.landscape import enumerate_landscape, write_landscapes
from workbench.problems import get_problem
from workbench.records import Measurement, Status

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
spec = importlib.util.spec_from_file_location("search_landscape", ROOT / "benchmarks" / "search_landscape.py")
bench = importlib.util.module_from_spec(spec)
sys.modules["search_landscape"] = bench
spec.loader.exec_module(bench)

HELD, TRAIN = "L1/08_max_rows", "L1/07_sum_rows"


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
    for pid, seed in ((HELD, 1), (TRAIN, 2)):
        fam = get_family(pid).restricted(algo=["loop_vec", "loop_scalar"], block=[256, 512, 1024], rows=[1, 2],
                                         warps=[1, 2, 4], stages=[1, 3], acc=["fp32"])
        land = enumerate_landscape(fam)
        lands.append(land)
        ms += _synthetic(land, seed)
    write_landscapes(d, lands, [get_problem(HELD), get_problem(TRAIN)], ms)
    return d


def test_replay_scores_every_method_and_budget(ship, tmp_path):
    out = tmp_path / "out"
    assert bench.main(["--landscapes", str(ship), "--gpu", "h100", "--budgets", "8,16", "--seeds", "2",
                       "--forecaster", "roofline", "--out", str(out)]) == 0
    doc = json.loads((out / "search-landscape-h100.json").read_text())
    assert doc["setup"]["synthetic"] is True and doc["setup"]["heldout_searched"] == [HELD]
    assert not (bench.RESULTS_DIR / "search-landscape-h100.json").exists()
    m = doc["metrics"]
    assert set(m) == {f"{x}@{b}" for x in bench.METHODS for b in (8, 16)}
    for b in (8, 16):
        base = m[f"measure_all@{b}"]
        assert base["final_best_ratio_median"] == 1.0 and base["runs"] == 2
        assert 0 < base["budget_fraction_to_match_median"] <= 1  # measure_all reaches its own best
        s = m[f"screen_topk@{b}"]
        assert "vs_random_diff" in s and s["vs_random_pairs"] == 2
        assert "vs_random_diff" not in m[f"screen_topk[random]@{b}"]
        assert 0 <= m[f"uncertainty_aware@{b}"]["trusted_share"] <= 1
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
    a, _ = bench.run_searches(ship, "h100", [8], [0], proto, "roofline", methods=("measure_all", "screen_topk"))
    b, _ = bench.run_searches(ship, "h100", [8], [0], proto, "roofline", methods=("measure_all", "screen_topk"))
    assert a == b
    assert seen["problems"] == {TRAIN}  # the held-out problem's rows never reach the fit
