"""benchmarks/results_page.py: docs/results.md is generated from the committed results files and
nothing else, and the generator reads results files whose `metrics` change shape."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench_scripts import load_bench

ROOT = Path(__file__).resolve().parents[1]
_PATH = ROOT / "benchmarks" / "results_page.py"
page = load_bench("results_page", _PATH)


def test_committed_page_regenerates_identically():
    committed = (ROOT / "docs" / "results.md").read_text()
    assert page.render(ROOT / "benchmarks" / "results") == committed, (
        "docs/results.md is stale: run `make results` and commit it")


def test_every_results_file_has_a_section_with_its_provenance():
    text = (ROOT / "docs" / "results.md").read_text()
    for path in sorted((ROOT / "benchmarks" / "results").glob("*.json")):
        data = json.loads(path.read_text())
        assert f"\n## {path.name}\n" in text
        section = text.split(f"\n## {path.name}\n", 1)[1].split("\n## ", 1)[0]
        for key in page.PROVENANCE:
            if key in data:
                assert page._escape(str(data[key])) in section, (path.name, key)


def _write(directory: Path, name: str, data: object) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).write_text(json.dumps(data))


def test_nested_metrics_with_ci_lists_render_as_tables(tmp_path):
    results = tmp_path / "results"
    _write(results, "forecast-h100.json", {
        "benchmark": "forecast", "gpu": "h100", "date": "2026-12-01", "commit": "abc1234",
        "metrics": {
            "learned": {"off_by_one": 0.81234, "off_by_one_ci": [0.79, 0.83], "n": 5323},
            "roofline": {"off_by_one": 0.45, "off_by_one_ci": [0.43, 0.47], "n": 5323},
            "splits": {"learned": {"ece": {"per_seed": [0.05, 0.04], "mean": 0.045, "sd": 0.007,
                                           "min": 0.04, "max": 0.05}}},
        },
    })
    text = page.render(results)
    assert "|  | `off_by_one` | `off_by_one_ci` | `n` |" in text
    assert "| `learned` | 0.8123 | [0.79, 0.83] | 5323 |" in text
    assert "| `roofline` | 0.45 | [0.43, 0.47] | 5323 |" in text
    assert "0.045 ± 0.007 (0.04 to 0.05)" in text
    assert page.render(results) == text


def test_wide_sibling_tables_are_transposed(tmp_path):
    results = tmp_path / "results"
    row = {f"m{i}": i / 10 for i in range(10)}
    _write(results, "wide-cpu.json", {"benchmark": "wide", "metrics": {"a": row, "b": row}})
    text = page.render(results)
    assert "|  | `a` | `b` |" in text
    assert "| `m3` | 0.3 | 0.3 |" in text


def test_many_wide_rows_share_one_table_of_their_leaves(tmp_path):
    results = tmp_path / "results"
    rows = {f"L1/p{i}": {"problem_id": f"L1/p{i}", "gpu": "h200", "best": 1 + i / 10, "ok": i % 2 == 0,
                         "why": "x" * 150, "judge": {f"k{j}": j for j in range(40)}} for i in range(9)}
    _write(results, "many-h200.json", {"benchmark": "many", "metrics": {"n": 9}, "per_problem": rows})
    text = page.render(results)
    assert text.count("`per_problem.L1/p") == 0  # no sub-heading per row
    assert "In every row: `gpu` h200." in text
    assert "|  | `best` | `ok` |" in text and "| `L1/p3` | 1.3 | false |" in text
    assert "Not in the table (in the JSON): `problem_id`, `why`, `judge`." in text
    assert "x" * 150 not in text and "`k39`" not in text


def test_missing_provenance_and_metrics_are_said_not_invented(tmp_path):
    results = tmp_path / "results"
    _write(results, "x-cpu.json", {"benchmark": "x", "runs": [{"a": 1}, {"a": 2}]})
    text = page.render(results)
    assert "| x | not recorded | not recorded | not recorded |" in text
    assert "No metrics recorded in this file." in text
    assert "| `runs` | 2 entries (in the JSON) |" in text


def test_unreadable_results_are_refused_with_the_file_named(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    (results / "broken-h100.json").write_text("{not json")
    with pytest.raises(page.ResultsPageError, match="broken-h100.json"):
        page.render(results)
    (results / "broken-h100.json").write_text("[1, 2]")
    with pytest.raises(page.ResultsPageError, match="one JSON object"):
        page.render(results)
    with pytest.raises(page.ResultsPageError, match="no \\*.json"):
        page.render(tmp_path / "empty")


@pytest.mark.parametrize("value, text", [
    (0.8143903813638925, "0.8144"), (1.2335780609502087, "1.234"), (2645.3, "2645"),
    (6.0, "6"), (4e-05, "4e-05"), (12345678.9, "1.235e+07"), (-0.0971697847, "-0.09717"),
    (0, "0"), (True, "true"), (float("nan"), "nan"),
])
def test_numbers_are_formatted_to_four_significant_digits(value, text):
    assert page.fmt_number(value) == text


def test_check_mode_reports_a_stale_page(tmp_path, capsys):
    results, out = tmp_path / "results", tmp_path / "results.md"
    _write(results, "a-cpu.json", {"benchmark": "a", "metrics": {"x": 1.5}})
    assert page.main(["--results", str(results), "--out", str(out), "--check"]) == 1
    assert page.main(["--results", str(results), "--out", str(out)]) == 0
    assert page.main(["--results", str(results), "--out", str(out), "--check"]) == 0
    _write(results, "a-cpu.json", {"benchmark": "a", "metrics": {"x": 2.5}})
    assert page.main(["--results", str(results), "--out", str(out), "--check"]) == 1
    assert "make results" in capsys.readouterr().err


def test_autotune_results_render_metrics_definitions_and_count_rows(tmp_path):
    results = tmp_path / "results"
    _write(results, "autotune-h100.json", {
        "benchmark": "autotune", "gpu": "h100", "date": "2026-12-01", "commit": "abc1234",
        "metrics": {"problems": 6, "autotune_time_saved_share": 0.8123, "final_speed_vs_full_median": 0.97,
                    "control_autotune_time_saved_share": 0.8, "control_final_speed_vs_full_median": 0.9},
        "definitions": {"autotune_time_saved_share": "1 - pruned / full autotune time, median"},
        "setup": {"configs": 24, "top_k": 4},
        "rows": [{"problem_id": "L1/14_matmul_square_fp32", "full": {"autotune_s": 30.0}}] * 6,
    })
    text = page.render(results)
    assert "| `autotune_time_saved_share` | 0.8123 |" in text
    assert "| `final_speed_vs_full_median` | 0.97 |" in text
    assert "1 - pruned / full autotune time, median" in text
    assert "L1/14_matmul_square_fp32" not in text  # per-problem rows stay in the JSON, counted
