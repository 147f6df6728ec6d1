"""Offline evaluation of forecasters: problem-level cross-validation, metric tables, plots.

    from workbench.evaluate import evaluate, table
    result = evaluate(LearnedForecaster, problems, candidates, measurements, gpu="h100", out="eval/")
    print(table([result]))
"""
from __future__ import annotations

from workbench.evaluate.crossval import (METRIC_KEYS, SPLITS, EvaluationResult, evaluate,
                                         save_json, score)
from workbench.evaluate.report import table, write_outputs

__all__ = ["METRIC_KEYS", "SPLITS", "EvaluationResult", "evaluate", "save_json", "score",
           "table", "write_outputs"]
