"""Study importers on fixture files in the published schemas: bins recomputed, records mapped."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from workbench import bins
from workbench.dataset import DatasetError, import_study, read_rows
from workbench.records import candidate_id
from workbench.store import Store

from study_fixtures import (A100, L40S, discovery_rows, eval_rows, prediction_rows, rl_rows,
                            study_label, write_jsonl, write_parquet)


@pytest.fixture
def db(tmp_path):
    with Store(tmp_path / "db.sqlite") as s:
        yield s


def test_eval_set_maps_rows_and_recomputes_bins(tmp_path, db):
    path = write_parquet(eval_rows(), tmp_path / "eval.parquet")
    res = import_study(path, "eval-set", db)
    assert res.rows == 6
    assert res.skipped == {"without a positive finite speedup": 1,
                           "candidates already imported against another anchor": 1}
    ms = {m.candidate_id: m for m in db.measurements()}
    assert len(ms) == 4 and len(db.problems()) == 2
    disagreements = 0
    for r in eval_rows()[:4]:
        m = ms[candidate_id(r["candidate_code"])]
        assert m.speedup == r["aggregated_speedup"] and m.ok
        assert m.bin == bins.bin_of(r["aggregated_speedup"])  # from the speedup, not true_bin
        disagreements += r["true_bin"] != bins.bin_number(r["aggregated_speedup"])
        log = json.loads(m.log)
        assert log["comparison_id"] == r["comparison_id"] and log["true_bin"] == r["true_bin"]
    assert disagreements > 0 and res.label_disagreements == disagreements


def test_eval_set_problems_and_hardware(tmp_path, db):
    import_study(write_parquet(eval_rows(), tmp_path / "e.parquet"), "eval-set", db)
    probs = {p.name: p for p in db.problems()}
    assert probs["softmax"].source == "ANCHOR_SOFTMAX = 1\n" and probs["softmax"].id.startswith("study/softmax/")
    k3 = db.get_candidate(candidate_id("k = 3\n"))
    assert k3.problem_id == probs["softmax"].id and k3.origin == "study:eval-set:softmax"
    m = db.get_measurement(k3.id, "l40s")
    hw = m.hardware
    assert hw.name == L40S and hw.sm_count == 142 and m.hardware_fingerprint == hw.fingerprint
    assert {m.hardware_key for m in db.measurements()} == {"a100", "l40s"}


def test_import_twice_is_idempotent_and_jsonl_equals_parquet(tmp_path, db):
    pq_path = write_parquet(eval_rows(), tmp_path / "e.parquet")
    import_study(pq_path, "eval-set", db)
    snapshot = (db.problems(), db.candidates(), db.measurements())
    import_study(pq_path, "eval-set", db)
    assert (db.problems(), db.candidates(), db.measurements()) == snapshot
    jl = import_study(write_jsonl(eval_rows(), tmp_path / "e.jsonl"), "eval-set")
    assert sorted(jl.records.measurements, key=lambda m: m.candidate_id) == \
        sorted(snapshot[2], key=lambda m: m.candidate_id)


def test_rl_training_pool(tmp_path, db):
    d = tmp_path / "pool"
    d.mkdir()
    rows = rl_rows()
    write_parquet(rows[:2], d / "part-0.parquet")  # a directory of shards is read whole
    write_parquet(rows[2:], d / "part-1.parquet")
    res = import_study(d, "rl-training-pool", db)
    assert res.rows == 3 and not res.skipped
    got = {m.candidate_id: m for m in db.measurements(hardware_key="a100")}
    for r in rows:
        m = got[candidate_id(r["candidate_code"])]
        assert m.bin == bins.bin_of(r["aggregated_speedup"]) and json.loads(m.log)["pair_type"] == r["pair_type"]
    # 1.41 sits on an edge (closed on the right): bin 1.0-1.41x; 1.42 is in the next bin
    assert got[candidate_id("r = 2\n")].bin + 1 == got[candidate_id("r = 3\n")].bin
    assert res.label_disagreements == sum(r["relative_bin"] != bins.bin_number(r["aggregated_speedup"])
                                          for r in rows)


def test_discovery_pairs_keep_lineage(tmp_path, db):
    res = import_study(write_jsonl(discovery_rows(), tmp_path / "d.jsonl"), "discovery-pairs", db)
    assert len(res.records.measurements) == 3
    g, p, c = (candidate_id(s) for s in ("G = 1\n", "P = 1\n", "C = 1\n"))
    assert db.get_candidate(p).parent_id == g and db.get_candidate(c).parent_id == p
    assert db.get_candidate(g) is not None  # the root parent exists as a candidate
    assert db.get_measurement(g, "a100") is None  # ...but was never measured
    assert [x.id for x in db.candidates(parent_id=p)] == [c]
    assert db.get_measurement(c, "a100").speedup == 2.2  # relative to its parent, the problem
    assert db.get_problem(db.get_candidate(c).problem_id).source == "P = 1\n"
    levels = {pr.name: pr.level for pr in db.problems()}
    assert levels == {"vgg19": 3, "fp8_quant": 0}


def test_predictions_join_the_eval_set(tmp_path, db):
    ev = write_parquet(eval_rows(), tmp_path / "eval.parquet")
    pr = write_parquet(prediction_rows(), tmp_path / "pred.parquet")
    res = import_study(pr, "eval-set-predictions", db, eval_set=ev)
    assert res.skipped["predictions without a matching eval-set row"] == 1
    k2 = candidate_id("k = 2\n")
    fs = {f.forecaster: f for f in db.forecasts(candidate_ids=[k2])}
    assert set(fs) == {"study:gemini3_flash:r0", "study:gemini3_flash:r1"}
    f0 = fs["study:gemini3_flash:r0"]
    assert f0.raw_sum == 0.9 and sum(f0.probabilities) == pytest.approx(1.0)
    assert f0.probabilities[5] == pytest.approx(0.5) and f0.predicted_bin == 5
    assert f0.hardware_key == "a100" and f0.prompt_tokens == 1200 and f0.seconds == 2.5
    (abst,) = db.forecasts(candidate_ids=[candidate_id("k = 1\n")])
    assert abst.abstained and abst.reasoning == "no tool call"
    assert db.get_measurement(k2, "a100").speedup == 1.5  # the eval set came along


def test_wrong_kind_or_missing_columns_or_path(tmp_path):
    path = write_parquet(eval_rows(), tmp_path / "e.parquet")
    with pytest.raises(DatasetError, match="is --kind right"):
        import_study(path, "discovery-pairs")
    with pytest.raises(DatasetError, match="unknown study dataset kind"):
        read_rows(path, "evalset")
    with pytest.raises(DatasetError, match="no such file"):
        read_rows(tmp_path / "missing.parquet", "eval-set")
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    with pytest.raises(DatasetError, match="cannot read"):
        read_rows(tmp_path / "bad.jsonl", "eval-set")


def test_hub_name_without_network_is_a_clear_error(tmp_path):
    pytest.importorskip("datasets")
    # offline mode must be set before `datasets` is imported, hence a fresh interpreter
    code = ("from workbench.dataset import DatasetError, read_rows\n"
            "try:\n    read_rows('codezakh/gpu-forecasters-eval-set', 'eval-set')\n"
            "except DatasetError as e:\n    print('DatasetError:', e)\n")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "HF_HOME": str(tmp_path / "hf")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120).stdout
    assert out.startswith("DatasetError:") and "pass the local path" in out


def test_study_label_fixture_really_differs_from_our_bins():
    # guards the fixtures: if the two formulas agreed, the recomputation tests would prove nothing
    assert study_label(1.5) != bins.bin_number(1.5) and A100.startswith("NVIDIA")


def test_label_disagreements_are_counted_against_the_chosen_convention(tmp_path):
    """The fixture labels come from the study's code formula: no disagreement under the
    study-code convention, some under the prompt's table (the default); the summary says which."""
    path = write_parquet(eval_rows(), tmp_path / "eval.parquet")
    table = import_study(path, "eval-set")
    code = import_study(path, "eval-set", bin_convention="study-code")
    assert table.bin_convention == "prompt-table" and "prompt-table convention" in table.summary()
    assert code.label_disagreements == 0 and "study-code convention" in code.summary()
    assert table.label_disagreements > 0
    with pytest.raises(DatasetError):
        import_study(path, "eval-set", bin_convention="other")
