"""Outputs of an evaluation: PNG plots, metrics.json and a study-style text table."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from workbench.calibration import metrics, plots
from workbench.evaluate.result import METRIC_KEYS, EvaluationResult

_HEADERS = {"top10_recovery_median": "top10", "accuracy": "acc", "off_by_one": "±1",
            "ece": "ECE", "brier": "Brier", "crps": "CRPS", "nll": "NLL", "aurc": "AURC",
            "spearman": "Spearman"}


def table(results: Sequence[EvaluationResult]) -> str:
    """A text table, one row per result: forecaster, train->test GPU, split, n, metrics."""
    rows = [r.row() for r in results]
    cols = ["forecaster", "train->test", "split", "n", *METRIC_KEYS]
    head = {c: _HEADERS.get(c, c) for c in cols}
    width = {c: max(len(head[c]), *(len(str(r[c])) for r in rows)) for c in cols}
    lines = ["  ".join(head[c].ljust(width[c]) for c in cols),
             "  ".join("-" * width[c] for c in cols)]
    lines += ["  ".join(str(r[c]).ljust(width[c]) for c in cols) for r in rows]
    return "\n".join(lines)


def offset_line(result: EvaluationResult) -> str | None:
    """One sentence on how much of the error is one offset per problem, or None without the
    keys (`metrics.problem_offsets` of the expected log2-speedups)."""
    m = result.metrics
    if not all(k in m for k in metrics.OFFSET_KEYS):
        return None
    return (f"{result.forecaster} {result.train_gpu}->{result.test_gpu}: problem offsets (median "
            f"error of a problem's candidates) spread {m['problem_offset_sd_log2']:.2f} octaves (sd); "
            f"{m['within_problem_mad_log2']:.2f} left within a problem (median |error|); off-by-one "
            f"would be {m['oracle_offset_off_by_one']:.3f} with each problem's offset known")


def write_outputs(result: EvaluationResult, out: Path) -> dict[str, Path]:
    """reliability.png, risk_coverage.png and metrics.json under `out/<forecaster>-<gpus>/`."""
    name = result.forecaster.replace(":", "_").replace("/", "_")
    trained = f"-{result.train_gpu}" if result.train_gpu != "-" else ""
    d = out / f"{name}{trained}-{result.test_gpu}"
    d.mkdir(parents=True, exist_ok=True)
    title = f"{result.forecaster} on {result.test_gpu}"
    probs, y = result.probabilities, result.true_bins
    written = {
        "reliability": plots.save(plots.plot_reliability(plots.reliability_info(probs, y),
                                                         title=title), d / "reliability.png"),
        "risk_coverage": plots.save(plots.plot_risk_coverage(plots.risk_coverage_info(probs, y),
                                                             title=title), d / "risk_coverage.png"),
    }
    (d / "metrics.json").write_text(json.dumps(result.to_json() | {"plots": {
        k: str(v) for k, v in written.items()}}, indent=2, default=float))
    written["metrics"] = d / "metrics.json"
    return written
