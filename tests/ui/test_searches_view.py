"""The Searches tab without a browser: every search with its spec and results, reopened in the
Search view, exported as CSV and Parquet."""
from __future__ import annotations

import io

import pandas as pd
import pytest
from inspector_fixtures import PROBLEM, make_two_gpu_store

from workbench.dataset import DEFAULT_SHIPPED_DIR
from workbench.ui.runner import SearchRunner
from workbench.ui.search_view import SearchView
from workbench.ui.searches_view import SearchesView, searches_frame

pytestmark = pytest.mark.skipif(not (DEFAULT_SHIPPED_DIR / "kernels.parquet").exists(), reason="no shipped data")


@pytest.fixture
def searched(tmp_path):
    store = make_two_gpu_store(tmp_path / "db.sqlite")
    runner = SearchRunner(store)
    for gpu, budget in (("replay:h100", 3), ("replay:h200", 4)):
        runner.start(PROBLEM, gpu, "screen_topk", "roofline", budget=budget)
        runner.join(timeout=120)
        assert runner.phase == "finished", runner.error
    return store


def test_every_search_is_listed_newest_first_with_its_spec_and_results(searched):
    df = searches_frame(searched)
    assert list(df["target"]) == ["replay:h200", "replay:h100"] and list(df["budget"]) == [4, 3]
    assert list(df["gpu_measurements"]) == [4, 3] and set(df["method"]) == {"screen_topk"}
    assert set(df["forecaster"]) == {"roofline"} and (df["best_speedup"] > 0).all()
    assert set(df["state"]) == {"finished"} and set(df["problem"]) == {PROBLEM}


def test_a_search_is_exported_and_reopened(searched):
    view = SearchesView(searched)
    sid = str(view.table.value.iloc[1]["search"])  # the H100 one
    assert all(w.disabled for w in view.downloads.values())
    view._on_click(type("E", (), {"row": 1})())
    assert view.selected == sid and not view.open_btn.disabled
    csv = pd.read_csv(io.BytesIO(view.downloads[("measurements", "csv")].callback().getvalue()))
    assert len(csv) == 3 and set(csv["hardware_key"]) == {"h100"} and set(csv["search_id"]) == {sid}
    cands = pd.read_parquet(io.BytesIO(view.downloads[("candidates", "parquet")].callback().getvalue()))
    assert (cands["decision"] == "measured").sum() == 3 and cands["source"].str.contains("ModelNew").all()
    assert view.downloads[("candidates", "parquet")].filename == f"{sid}-candidates.parquet"
    opened = []
    view.param.watch(lambda e: opened.append(e.new), "reopen")
    view._reopen()
    assert opened == [sid]
    search = SearchView(searched, SearchRunner(searched))
    search.show_search(sid)
    assert f"past search <code>{sid}</code>" in search.status.object and len(search.table.value) >= 3
    assert search._shown == {"search": sid, "gpu": "h100", "replay": True}
