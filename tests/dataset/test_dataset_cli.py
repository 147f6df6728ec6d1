"""`workbench dataset ...` commands end to end on temporary databases."""
from __future__ import annotations

import json

import pyarrow.parquet as pq

from workbench.cli import main
from workbench.store import Store

from study_fixtures import eval_rows, prediction_rows, write_parquet


def test_stats_text_and_json(store, capsys, records):
    db = str(store.path)
    assert main(["--db", db, "dataset", "stats"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{len(records[2])} measurements of 4 candidates over 2 problems")
    assert main(["--db", db, "dataset", "stats", "--gpu", "h200", "--json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert st["measurements"] == 1 and st["by_gpu"] == {"h200": 1}


def test_export_shipped_load_shipped_and_export_hf(tmp_path, store, capsys, records):
    db = str(store.path)
    assert main(["--db", db, "dataset", "export-shipped", str(tmp_path / "shipped")]) == 0
    fresh = str(tmp_path / "fresh.sqlite")
    assert main(["--db", fresh, "dataset", "load-shipped", str(tmp_path / "shipped")]) == 0
    assert "loaded 2 problems, 4 candidates, 5 measurements" in capsys.readouterr().out
    with Store(fresh) as s:
        assert sorted(s.measurements(), key=lambda m: (m.candidate_id, m.hardware_key)) == \
            sorted(records[2], key=lambda m: (m.candidate_id, m.hardware_key))
    assert main(["--db", fresh, "dataset", "export-hf", str(tmp_path / "hf"), "--ok-only"]) == 0
    t = pq.read_table(tmp_path / "hf" / "data" / "train-00000-of-00001.parquet")
    assert t.num_rows == sum(m.ok for m in records[2])


def test_import_study_and_dry_run(tmp_path, capsys):
    ev = write_parquet(eval_rows(), tmp_path / "eval.parquet")
    pr = write_parquet(prediction_rows(), tmp_path / "pred.parquet")
    db = str(tmp_path / "db.sqlite")
    assert main(["--db", db, "dataset", "import-study", ev, "--kind", "eval-set", "--dry-run"]) == 0
    assert "dry run" in capsys.readouterr().out
    with Store(db) as s:
        assert s.counts()["measurements"] == 0
    assert main(["--db", db, "dataset", "import-study", pr, "--kind", "eval-set-predictions",
                 "--eval-set", ev]) == 0
    assert "3 forecasts" in capsys.readouterr().out
    with Store(db) as s:
        assert s.counts()["forecasts"] == 3 and s.counts()["measurements"] == 4


def test_user_errors_exit_1_with_a_message(tmp_path, capsys):
    db = str(tmp_path / "db.sqlite")
    assert main(["--db", db, "dataset", "load-shipped", str(tmp_path / "nope")]) == 1
    assert "no such directory" in capsys.readouterr().err
    bad = write_parquet(eval_rows(), tmp_path / "e.parquet")
    assert main(["--db", db, "dataset", "import-study", bad, "--kind", "rl-training-pool"]) == 1
    assert "is --kind right" in capsys.readouterr().err
