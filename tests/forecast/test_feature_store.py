"""Feature rows on disk (workbench.forecast.feature_store): read back exactly, shared by processes,
never a source of failure."""
from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from workbench.forecast import feature_store, features
from workbench.forecast.feature_store import FeatureStore, FeatureStoreWarning
from workbench.problems import loader
from workbench.records import Hardware
from workbench.zoo import zoo_candidates

H100 = Hardware(key="h100", name="NVIDIA H100")
LIB = Path(loader.__file__).parent / "library"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def rows():
    p = loader.load_file(LIB / "level1" / "01_softmax.py")
    return [(p, c, H100) for c in zoo_candidates(p.id)[:6]]


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """An empty cache folder and an empty memory cache."""
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(feature_store.ENV_SWITCH, raising=False)
    monkeypatch.setattr(features, "_FEATURE_CACHE", type(features._FEATURE_CACHE)())
    return tmp_path


def _stored(folder: Path) -> int:
    with sqlite3.connect(folder / feature_store.FILE_NAME) as db:
        return db.execute("SELECT COUNT(*) FROM features").fetchone()[0]


def test_rows_computed_once_are_read_back_exactly(fresh, rows, monkeypatch):
    first = features.feature_matrix(rows)
    assert _stored(fresh) == len(rows)
    # A new process's view: nothing in memory, and computing is not allowed any more.
    monkeypatch.setattr(features, "_FEATURE_CACHE", type(features._FEATURE_CACHE)())

    def no_compute(*a):
        raise AssertionError("a stored row was computed again")

    monkeypatch.setattr(features, "_compute", no_compute)
    again = features.feature_matrix(rows)
    assert np.array_equal(first, again)


def test_another_process_reads_the_rows_and_gets_the_same_matrix(fresh, rows):
    first = features.feature_matrix(rows)
    code = ("import json, sys\n"
            "from workbench.forecast import features\n"
            "from workbench.problems import loader\n"
            "from workbench.records import Hardware\n"
            "from workbench.zoo import zoo_candidates\n"
            "p = loader.load_file(sys.argv[1])\n"
            "def boom(*a):\n    raise SystemExit('computed again')\n"
            "features._compute = boom\n"
            "X = features.feature_matrix([(p, c, Hardware(key='h100', name='NVIDIA H100')) "
            "for c in zoo_candidates(p.id)[:6]])\n"
            "print(json.dumps(X.tolist()))\n")
    out = subprocess.run([sys.executable, "-c", code, str(LIB / "level1" / "01_softmax.py")], capture_output=True,
                         text=True, cwd=ROOT, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert np.array_equal(np.array(json.loads(out.stdout)), first)


def test_switched_off_by_the_environment(fresh, rows, monkeypatch):
    monkeypatch.setenv(feature_store.ENV_SWITCH, "0")
    features.feature_matrix(rows)
    assert not (fresh / feature_store.FILE_NAME).exists()


def test_a_row_of_another_shape_or_a_foreign_value_is_a_miss(tmp_path):
    names = ("a", "b")
    store = FeatureStore(tmp_path / "f.sqlite", names)
    store.put_many({"k1": [1.0, 2.5], "k2": [3.0, 4.0]})
    with sqlite3.connect(tmp_path / "f.sqlite") as db:
        db.execute("UPDATE features SET vals = ? WHERE key = 'k2'", ("[1.0]",))
        db.execute("INSERT INTO features VALUES ('k3', 'not json')")
        db.execute("INSERT INTO features VALUES ('k4', '[\"x\", 1.0]')")
    assert store.get_many(["k1", "k2", "k3", "k4", "absent"]) == {"k1": [1.0, 2.5]}
    with pytest.raises(ValueError):
        store.put_many({"k5": [1.0]})


def test_the_stored_key_changes_with_the_feature_names_and_the_content():
    key = ("abc", 1.0)
    a = feature_store.row_key(key, ("x", "y"))
    assert a == feature_store.row_key(key, ("x", "y"))
    assert a != feature_store.row_key(key, ("x", "y", "z"))
    assert a != feature_store.row_key(("abd", 1.0), ("x", "y"))


def test_an_unusable_file_turns_the_store_off_and_features_are_still_computed(fresh, rows):
    (fresh / feature_store.FILE_NAME).write_bytes(b"this is not a SQLite database" * 100)
    feature_store._STORES.clear()
    with pytest.warns(FeatureStoreWarning, match="turned off"):
        X = features.feature_matrix(rows)
    assert X.shape == (len(rows), len(features.FEATURE_NAMES)) and np.isfinite(X).all()
    feature_store._STORES.clear()
