"""benchmarks/compile_lock_bench.py in its --cpu smoke mode: three runs of one batch, compared."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench_scripts import load_bench

ROOT = Path(__file__).resolve().parents[2]
bench = load_bench("compile_lock_bench")


def test_three_runs_of_one_batch_in_order_and_their_agreement(tmp_path, monkeypatch):
    seen = []
    real = bench.lb.measure_batch

    def spy(cands, args, *a, **k):
        seen.append((args.compile_unlocked, [c.id for c in cands]))
        return real(cands, args, *a, **k)

    monkeypatch.setattr(bench.lb, "measure_batch", spy)
    out = tmp_path / "out"
    assert bench.main(["--cpu", "--out", str(out), "--problems", "L1/08_max_rows", "--max-points", "4",
                       "--every", "2"]) == 0
    assert [u for u, _ in seen] == [False, True, False]
    assert seen[0][1] == seen[1][1] == seen[2][1] and len(seen[0][1]) == 2   # the same batch each time
    doc = json.loads((out / "compile-lock-cpu.json").read_text())
    m = doc["metrics"]
    assert doc["benchmark"] == "compile-lock" and m["candidates"] == 2 and m["gpus"] == 1
    for name in ("default_1", "unlocked", "default_2"):
        rows = (out / f"compile-lock-{name}.jsonl").read_text().splitlines()
        assert m[f"measured_{name}"] == len(rows) == 2 and m[f"per_min_{name}"] > 0
    assert m["compared"] == 2 and m["unlocked_vs_default_pairs"] == m["default_vs_default_pairs"] == 2
    assert m["rate_ratio"] == pytest.approx(
        m["per_min_unlocked"] / ((m["per_min_default_1"] + m["per_min_default_2"]) / 2), abs=1e-3)
    assert 0 <= m["unlocked_vs_default_within_tie_share"] <= 1
    assert m["default_vs_default_same_status_share"] == 1.0
    assert m["discordant_unlocked_only"] + m["discordant_control_only"] <= 2 and 0 < m["discordant_p"] <= 1
    assert not (bench.lb.RESULTS_DIR / "compile-lock-cpu.json").exists()   # smoke output is never a result


def test_bad_batches_are_refused(tmp_path):
    with pytest.raises(SystemExit, match="offset"):
        bench.main(["--cpu", "--out", str(tmp_path), "--problems", "L1/08_max_rows", "--every", "2", "--offset", "2"])
    with pytest.raises(SystemExit, match="empty"):
        bench.main(["--cpu", "--out", str(tmp_path), "--problems", "L1/08_max_rows", "--max-points", "2",
                    "--every", "5", "--offset", "3"])


def _row(speedup: float, status: str = "ok"):
    return bench.Measurement.from_dict({"candidate_id": "c", "problem_id": "p", "hardware_key": "h",
                                        "status": status, "speedup": speedup if status == "ok" else None})


def test_discordance_counts_who_leaves_the_tie_and_tests_the_split():
    r = _row
    triples = ([(r(1.0), r(1.2), r(1.0))] * 5                 # only the unlocked run moves
               + [(r(1.0), r(1.0), r(1.0))] * 20              # all agree
               + [(r(1.0), r(1.0), r(1.3))]                   # only the second default moves
               + [(r(1.0), r(1.5), r(1.5))]                   # both move: not discordant
               + [(r(1.0), r(1.0, "incorrect"), r(1.3))])  # not correct in all three: skipped
    d = bench.discordance(triples, 0.02)
    assert d["discordant_unlocked_only"] == 5 and d["discordant_control_only"] == 1
    assert d["discordant_p"] == pytest.approx(2 * (1 + 6) / 64, abs=1e-4)   # exact two-sided sign test
    assert bench.discordance([(r(1.0), r(1.0), r(1.0))], 0.02)["discordant_p"] == 1.0
