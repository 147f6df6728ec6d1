"""The Inspector shows one measurement: its own log, the forecast for its GPU type (labelled),
and whether the numbers were measured in the search being watched, replayed in it, or recorded."""
from __future__ import annotations

import pytest
from inspector_fixtures import PROBLEM, make_two_gpu_store, own_line

from workbench.dataset import DEFAULT_SHIPPED_DIR
from workbench.records import Forecast
from workbench.ui.inspector import CandidateInspector, log_html, own_log, provenance_html, run_facts
from workbench.ui.runner import SearchRunner
from workbench.ui.search_view import SearchView


def test_own_log_keeps_only_the_candidates_sections():
    log = "setup\n=== candidate aaa ===\nA1\n=== candidate bbb ===\nB\n=== candidate aaa ===\nA2\n"
    text, foreign = own_log(log, "aaa")
    assert foreign and "A1" in text and "A2" in text and "setup" in text and "B\n" not in text
    assert own_log("plain text\n", "aaa") == ("plain text\n", False)
    assert own_log("=== candidate bbb ===\nB\n", "aaa") == ("", True)


def test_log_html_says_when_no_own_log_was_recorded():
    from workbench.records import Measurement, Status

    m = Measurement(candidate_id="aaa", problem_id="p", hardware_key="h100", status=Status.OK,
                    log="=== candidate bbb ===\n")
    html = log_html(m)
    assert "Nothing to show" in html and "only other candidates' output" in html and "bbb" not in html
    # one note, never "only this candidate's part is shown" beside "nothing recorded"
    assert html.count("wb-log-note") == 1 and "part of the recorded log is shown" not in html
    shown = log_html(Measurement(candidate_id="aaa", problem_id="p", hardware_key="h100", status=Status.OK,
                                 log="=== candidate bbb ===\nB\n=== candidate aaa ===\nA\n"))
    assert "Only this candidate's part" in shown and "Nothing to show" not in shown and "A\n" in shown
    assert "Not measured on this GPU type" in log_html(None)


def test_an_abstention_shows_no_confidence_in_the_table_or_the_inspector():
    from workbench.records import Candidate
    from workbench.ui.inspector import reasoning_html
    from workbench.ui.runner import candidate_rows

    c = Candidate.from_source("L1/p", "x = 1\n", origin="zoo")
    f = Forecast.abstention("llm", c.id, "L1/p", "h100", reason="unparseable answer: no tool call")
    rows = candidate_rows([{"kind": "generated", "payload": {"candidate": c.to_dict()}},
                           {"kind": "forecast", "payload": {"forecast": f.to_dict()}}], baselines={})
    assert rows[0]["forecast_bin"] == "abstained" and rows[0]["confidence"] is None
    html = reasoning_html(f, "h100")
    assert "abstained" in html and "no confidence" in html and "0.12" not in html and "0.125" not in html
    assert "unparseable answer: no tool call" in html


def test_provenance_says_where_the_numbers_come_from():
    from workbench.records import Measurement, Status

    m = Measurement(candidate_id="a", problem_id="p", hardware_key="h200", status=Status.OK,
                    measured_at="2026-01-01")
    assert "measured in this run" in provenance_html(m, "measured", "s1")
    assert "replayed in this run" in provenance_html(m, "replayed", "s1")
    rec = provenance_html(m, "trusted", "s1")
    assert "<b>recorded</b> on H200" in rec and "trusted" in rec and "measured in this run" not in rec
    assert "<b>recorded</b>" in provenance_html(m, "")
    assert "not measured" in provenance_html(None, "trusted")


needs_shipped = pytest.mark.skipif(not (DEFAULT_SHIPPED_DIR / "kernels.parquet").exists(),
                                   reason="shipped measurements missing")


@pytest.fixture
def store(tmp_path):
    return make_two_gpu_store(tmp_path / "two.sqlite")


@needs_shipped
def test_h200_row_shows_its_own_log_and_the_h200_forecast_or_none(store):
    cid = store.candidates()[3].id
    probs = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
    store.put_forecasts([Forecast(forecaster="roofline", candidate_id=cid, problem_id=PROBLEM,
                                  hardware_key="h100", probabilities=probs)])
    insp = CandidateInspector(store)
    insp.show(cid, "h200")
    assert own_line(cid, "h200") in insp.log.object and "h100" not in insp.log.object
    assert "other candidates' output" in insp.log.object  # the neighbour's section was left out
    assert "on <b>H200</b>" in insp.details.object
    assert "No forecast</b> for H200" in insp.reasoning.object and "forecasts exist for H100" in insp.reasoning.object
    assert insp._dist.data["p"] == [] and "No forecast for H200" in insp.chart_label.object
    assert "<b>recorded</b> on H200" in insp.provenance.object
    store.put_forecasts([Forecast(forecaster="roofline", candidate_id=cid, problem_id=PROBLEM,
                                  hardware_key="h200", probabilities=tuple(reversed(probs)))])
    insp.show(cid, "h200")
    assert insp._dist.data["p"][0] == 1.0  # the H200 forecast, not the H100 one
    assert "for <b>H200</b>" in insp.reasoning.object and "Forecast for <b>H200</b>" in insp.chart_label.object
    assert insp._fig.title.text.startswith("Forecast for H200")
    insp.show(cid, "h100")
    assert insp._dist.data["p"][-1] == 1.0 and own_line(cid, "h100") in insp.log.object


@needs_shipped
def test_search_rows_say_measured_replayed_or_recorded(store):
    runner = SearchRunner(store)
    view = SearchView(store, runner)
    view.problem.value, view.gpu.value, view.forecaster.value = PROBLEM, "replay:h200", "roofline"
    view.budget.value = "3"
    view._start()
    runner.join(timeout=120)
    assert runner.phase == "finished", runner.error
    view.refresh(force=True)
    table = view.table.value
    events = store.events(runner.search_id)
    measured = table[table["decision"] == "measured"]
    dropped = table[table["decision"] == ""]
    assert len(measured) == 3 and len(dropped) >= 1
    insp = CandidateInspector(store)
    for rows, want in ((measured, "replayed in this run"), (dropped, "this search did not measure it")):
        view._on_click(type("E", (), {"row": int(rows.index[0])})())
        assert view.selected_gpu == "h200" and view.selected_replay and view.selected_search == runner.search_id
        insp.show(view.selected_candidate, view.selected_gpu, view.selected_search, view.selected_replay)
        assert want in insp.provenance.object
        assert "on <b>H200</b>" in insp.details.object
        assert own_line(view.selected_candidate, "h200") in insp.log.object
        assert run_facts(events, view.selected_candidate)["forecast"]["hardware_key"] == "h200"
        assert "for <b>H200</b>" in insp.reasoning.object
    # The same measured candidate opened as a live run's row would say it was measured now.
    insp.show(str(measured.iloc[0]["candidate"]), "h200", runner.search_id, replay=False)
    assert "measured in this run" in insp.provenance.object
