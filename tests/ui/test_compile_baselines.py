"""Speedup over torch.compile in the views: the inspector's measurement details and the dataset
view's `over_compile` column, on hand-made measurements and baselines (no server, no GPU)."""
from __future__ import annotations

import math

import pytest

from workbench.dataset import DEFAULT_SHIPPED_DIR, CompileBaseline, load_compile_baselines
from workbench.records import Candidate, Measurement, Problem, Status
from workbench.store import Store
from workbench.ui.dataset_view import DatasetView, measurements_frame
from workbench.ui.inspector import CandidateInspector, measurement_html


def _measurement(c: Candidate, gpu: str, speedup: float | None, status=Status.OK) -> Measurement:
    ok = status is Status.OK
    return Measurement(candidate_id=c.id, problem_id=c.problem_id, hardware_key=gpu, status=status,
                       reference_ms=2.0, reference_ci_low_ms=1.9, reference_ci_high_ms=2.1,
                       reference_runs=30, candidate_ms=2.0 / speedup if ok else None,
                       candidate_ci_low_ms=1.0 if ok else None, candidate_ci_high_ms=1.2 if ok else None,
                       candidate_runs=30 if ok else 0, speedup=speedup if ok else None,
                       compile_s=1.5, reason="" if ok else "wrong output",
                       measured_at="2026-11-01T10:00:00Z")


def _baseline(pid: str, gpu: str, eager_ms: float, compiled_ms: float) -> CompileBaseline:
    return CompileBaseline(problem_id=pid, mode="max-autotune-no-cudagraphs", eager_ms=eager_ms,
                           compiled_ms=compiled_ms, speedup_over_eager=eager_ms / compiled_ms,
                           compile_s=4.0, eager_cv_pct=0.5, compiled_cv_pct=0.5, hardware_key=gpu,
                           hardware_fingerprint="fp", measured_at="2026-11-20T08:00:00Z")


SOFTMAX, GEMM = "L1/01_softmax", "L2/05_gemm_relu"
# torch.compile makes softmax 1.25x faster than eager on the H100; no baseline for the gemm or H200.
BASELINES = {(SOFTMAX, "h100"): _baseline(SOFTMAX, "h100", 0.2, 0.16)}


@pytest.fixture
def candidates():
    c1 = Candidate.from_source(SOFTMAX, "a = 1\n", origin="zoo:one_pass", created_at="2026-11-01T09:00:00Z")
    c2 = Candidate.from_source(SOFTMAX, "a = 2\n", parent_id=c1.id, generation=1,
                               origin="mutation:block", created_at="2026-11-01T09:01:00Z")
    c3 = Candidate.from_source(GEMM, "b = 1\n", origin="llm:m:p1", created_at="2026-11-01T09:02:00Z")
    return c1, c2, c3


@pytest.fixture
def store(tmp_path, candidates):
    c1, c2, c3 = candidates
    with Store(tmp_path / "db.sqlite") as s:
        s.put_problems([Problem(id=SOFTMAX, level=1, name="01_softmax", source="# softmax\n"),
                        Problem(id=GEMM, level=2, name="05_gemm_relu", source="# gemm\n")])
        s.put_candidates([c1, c2, c3])
        s.put_measurements([_measurement(c1, "h100", 1.5), _measurement(c2, "h100", 2.5),
                            _measurement(c1, "h200", 1.4), _measurement(c3, "h100", 0.8),
                            _measurement(c2, "h200", None, Status.INCORRECT)])
        yield s


def test_markdown_shows_the_speedup_over_torch_compile(candidates):
    text = measurement_html(_measurement(candidates[1], "h100", 2.5), baselines=BASELINES)
    lines = text.split("<br>")
    assert lines[1].startswith("<b>speedup</b> 2.500x")
    assert lines[2] == ("<b>over torch.compile</b> 2.000x (torch.compile: 1.250x over eager, "
                        "0.1600 ms compiled, mode max-autotune-no-cudagraphs)")
    assert lines[-1] == "<b>measured at</b> 2026-11-01T10:00:00Z"  # the rest unchanged


def test_markdown_says_when_no_baseline_was_measured(candidates):
    for m in (_measurement(candidates[0], "h200", 1.4), _measurement(candidates[2], "h100", 0.8)):
        text = measurement_html(m, baselines=BASELINES)
        assert (f"<b>over torch.compile</b> no torch.compile baseline was measured for "
                f"{m.problem_id} on {m.hardware_key}") in text
        assert "over eager" not in text


def test_markdown_of_failures_and_unmeasured_has_no_compile_line(candidates):
    failed = measurement_html(_measurement(candidates[1], "h100", None, Status.INCORRECT), BASELINES)
    assert "torch.compile" not in failed and "<b>reason</b> <span class='wb-reason'>wrong output</span>" in failed
    assert measurement_html(None, BASELINES) == "<b>not measured</b> (trusted forecast or still queued)"


@pytest.mark.skipif(not (DEFAULT_SHIPPED_DIR / "compile-h100.jsonl").exists(),
                    reason="shipped torch.compile baselines missing")
def test_markdown_defaults_to_the_shipped_baselines(candidates):
    shipped = load_compile_baselines()[(SOFTMAX, "h100")]
    text = measurement_html(_measurement(candidates[0], "h100", 3.0))
    assert f"<b>over torch.compile</b> {3.0 / shipped.speedup_over_eager:.3f}x" in text
    assert f"torch.compile: {shipped.speedup_over_eager:.3f}x over eager" in text
    assert "no torch.compile baseline" in measurement_html(_measurement(candidates[0], "a100", 3.0))


def test_inspector_details_use_the_given_baselines(store, candidates):
    insp = CandidateInspector(store, baselines=BASELINES, hardware_key="h100", candidate_id=candidates[1].id)
    assert "<b>over torch.compile</b> 2.000x" in insp.details.object
    insp.hardware_key = "h200"  # incorrect there: no speedup, no comparison
    assert "torch.compile" not in insp.details.object and "incorrect" in insp.details.object
    insp.candidate_id = candidates[0].id  # ok on the H200, but no H200 baseline
    assert f"no torch.compile baseline was measured for {SOFTMAX} on h200" in insp.details.object


def test_measurements_frame_has_the_over_compile_column(store, candidates):
    f = measurements_frame(store, baselines=BASELINES)
    assert list(f.columns[:6]) == ["candidate", "problem", "gpu", "status", "speedup", "over_compile"]
    by = {(r.candidate, r.gpu): r.over_compile for r in f.itertuples()}
    c1, c2, c3 = candidates
    assert by[(c1.id, "h100")] == pytest.approx(1.5 / 1.25)
    assert by[(c2.id, "h100")] == pytest.approx(2.0)
    for key in ((c1.id, "h200"), (c3.id, "h100"), (c2.id, "h200")):  # no baseline; a failure
        assert math.isnan(by[key])


def test_dataset_view_shows_the_column_and_its_median(store):
    view = DatasetView(store, baselines=BASELINES)
    table = view.table.value
    assert "over_compile" in table.columns and view.table.titles["over_compile"] == "over torch.compile"
    assert "median over torch.compile 1.60x (2 with a torch.compile baseline)" in view.summary.object
    view.gpu = "h200"  # no H200 baselines: the column is blank and the summary says nothing of it
    assert view.table.value["over_compile"].isna().all() and len(view.table.value) == 2
    assert "torch.compile" not in view.summary.object


def test_search_view_rows_show_the_speedup_over_torch_compile():
    from workbench.ui.runner import candidate_rows
    from workbench.ui.search_view import COLUMNS

    a, b, c, d = (Candidate(id=i, problem_id=p, source="", origin="zoo") for i, p in
                  (("a", SOFTMAX), ("b", SOFTMAX), ("c", GEMM), ("d", SOFTMAX)))
    events = [{"kind": "generated", "payload": {"candidate": x.to_dict()}} for x in (a, b, c, d)]
    events += [{"kind": "measured", "payload": {"measurement": m.to_dict()}} for m in (
        _measurement(a, "h100", 2.0), _measurement(b, "h100", None, Status.INCORRECT),
        _measurement(c, "h100", 3.0), _measurement(d, "h200", 1.5))]
    rows = {r["candidate"]: r for r in candidate_rows(events, baselines=BASELINES)}
    assert "over_compile" in COLUMNS and set(COLUMNS) >= set(rows["a"])
    assert rows["a"]["speedup"] == pytest.approx(2.0)
    assert rows["a"]["over_compile"] == pytest.approx(2.0 / 1.25)   # eager 0.2 ms, compiled 0.16 ms
    assert rows["b"]["over_compile"] is None                          # failed: no speedup
    assert rows["c"]["over_compile"] is None and rows["c"]["speedup"] == pytest.approx(3.0)  # no baseline
    assert rows["d"]["over_compile"] is None                          # baseline is for the H100 only
