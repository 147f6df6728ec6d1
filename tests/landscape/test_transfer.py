"""workbench/landscape/transfer.py and benchmarks/landscape_transfer.py on synthetic landscapes
(never written to benchmarks/results)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.families import get_family
from workbench.landscape import enumerate_landscape, write_landscapes
from workbench.landscape.structure import median_first_hit
from workbench.landscape.transfer import TransferError, transfer
from workbench.problems import get_problem
from workbench.records import Measurement, Status
from bench_scripts import load_bench

ROOT = Path(__file__).resolve().parents[2]
bench = load_bench("landscape_transfer")


def test_the_source_order_and_the_random_control():
    ids = list("abcdefgh")
    source = {"a": 1.0, "b": 3.0, "c": 2.0, "d": None, "e": 2.0, "f": 0.5, "g": None, "h": 0.9}
    target = {"a": 1.0, "b": 1.5, "c": 4.0, "d": 4.05, "e": 1.0, "f": 0.5, "g": 1.0, "h": None}
    r = transfer(ids, source, target, tie_rel=0.02, budget=4)
    # Source order: b (3.0), c and e (2.0: landscape order), a, h, f, then d and g (not correct there).
    # The target's best is d (4.05); c (4.0) ties with it, the second in that order.
    assert r["source_order_budget_to_best"] == 2 / 4
    assert r["source_best_on_target"] == pytest.approx(1.5 / 4.05)
    assert r["source_top4_on_target"] == pytest.approx(4.0 / 4.05)   # b, c, e, a
    assert r["random_order_budget_to_best"] == median_first_hit(8, 2) / 4
    assert r["source_order_gain"] == pytest.approx(r["random_order_budget_to_best"] - 0.5)
    assert r["candidates"] == 8 and r["common_correct"] == 5 and r["target_within_tie"] == 2
    # Common correct a, b, c, e, f: source 1, 3, 2, 2, 0.5 against target 1, 1.5, 4, 1, 0.5.
    from scipy.stats import spearmanr
    assert r["spearman"] == pytest.approx(spearmanr([1, 3, 2, 2, 0.5], [1, 1.5, 4, 1, 0.5]).statistic)


def test_a_source_best_that_fails_on_the_target_counts_zero():
    r = transfer(["a", "b", "c"], {"a": 2.0, "b": 1.0, "c": 0.5}, {"a": None, "b": 1.0, "c": 2.0})
    assert r["source_best_on_target"] == 0.0 and r["source_order_budget_to_best"] == 3 / 64
    assert r["spearman"] is None                     # two common correct candidates


def test_nothing_correct_on_a_side_is_an_error():
    with pytest.raises(TransferError, match="correct on the source"):
        transfer(["a", "b"], {"a": None}, {"a": 1.0, "b": 2.0})


HELD, TRAIN = "L1/08_max_rows", "L1/07_sum_rows"


def _ship(d: Path, gpu: str, scale, drop_last: str | None = None) -> None:
    lands, ms = [], []
    for pid in (HELD, TRAIN):
        fam = get_family(pid).restricted(algo=["loop_vec", "loop_scalar"], acc=["fp32"], block=[256, 512, 1024],
                                          rows=[1, 2], warps=[1, 2, 4], stages=[1, 3])
        land = enumerate_landscape(fam)
        lands.append(land)
        rows = []
        for i, c in enumerate(land.candidates):
            s = scale(pid, i)
            rows.append(Measurement(candidate_id=c.id, problem_id=pid, hardware_key=gpu, status=Status.OK,
                                    reference_ms=1.0, candidate_ms=1.0 / s, speedup=s, reason="synthetic"))
        ms += rows[:-1] if pid == drop_last else rows
    write_landscapes(d, lands, [get_problem(HELD), get_problem(TRAIN)], ms)


def test_the_bench_compares_whole_landscapes_and_never_writes_a_partial_result(tmp_path, monkeypatch):
    """Target = source speeds reversed on the held-out problem (the source's order is the worst
    one there) and the same speeds on the training problem (its best comes first); a landscape
    with an unmeasured candidate on the target is left out and named; with 2 of the protocol's
    problems compared, nothing goes to benchmarks/results."""
    src, tgt = tmp_path / "src", tmp_path / "tgt"
    _ship(src, "h200", lambda pid, i: 1.05 ** i)   # 5% apart: no two speeds tie
    _ship(tgt, "h100", lambda pid, i: 1.05 ** -i if pid == HELD else 1.05 ** i)
    monkeypatch.setattr(bench, "RESULTS", tmp_path / "results")
    argv = ["--source", str(src), "--source-gpu", "h200", "--target", str(tgt), "--target-gpu", "h100",
            "--out", str(tmp_path / "out")]
    assert bench.main(argv) == 0
    assert not (tmp_path / "results").exists()
    doc = json.loads((tmp_path / "out" / "landscape-transfer-from-h200-h100.json").read_text())
    held, train = doc["per_problem"][HELD], doc["per_problem"][TRAIN]
    assert held["heldout"] and not train["heldout"]
    assert held["spearman"] == pytest.approx(-1.0) and train["spearman"] == pytest.approx(1.0)
    assert train["source_order_budget_to_best"] == 1 / 64 and train["source_best_on_target"] == 1.0
    assert held["source_order_budget_to_best"] == held["candidates"] / 64 and held["source_order_gain"] < 0
    assert held["source_best_on_target"] == pytest.approx(1.05 ** -(held["candidates"] - 1))
    m = doc["metrics"]
    assert m["all"]["problems"] == 2 and m["heldout"]["problems"] == 1
    assert m["all"]["source_order_sooner_share"] == 0.5 and m["all"]["source_order_later_share"] == 0.5
    assert doc["gpu"] == "h100" and doc["benchmark"] == "landscape-transfer-from-h200"

    part = tmp_path / "part"
    _ship(part, "h100", lambda pid, i: 1.05 ** i, drop_last=HELD)
    argv[5] = str(part)
    assert bench.main(argv) == 0
    doc = json.loads((tmp_path / "out" / "landscape-transfer-from-h200-h100.json").read_text())
    assert list(doc["per_problem"]) == [TRAIN] and doc["setup"]["target_partial"][HELD].endswith(
        f"/{held['candidates']}")
    assert doc["metrics"]["heldout"]["problems"] == 0


def test_the_bench_refuses_one_gpu_and_rows_of_another_gpu(tmp_path):
    src = tmp_path / "src"
    _ship(src, "h200", lambda pid, i: 1.0 + i)
    with pytest.raises(SystemExit):
        bench.main(["--source", str(src), "--source-gpu", "h200", "--target", str(src), "--target-gpu", "h200"])
    # The target folder holds only h200 rows: no landscape is whole on h100.
    with pytest.raises(SystemExit, match="no problem is measured whole on both"):
        bench.main(["--source", str(src), "--source-gpu", "h200", "--target", str(src), "--target-gpu", "h100"])
