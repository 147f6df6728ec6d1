"""Offline evaluation of a forecaster with problem-level cross-validation.

`evaluate(forecaster_or_factory, problems, candidates, measurements)` scores reference-relative
forecasts of every ok measurement against its measured bin. With split="heldout-problems" the
problems are split into `folds` groups (GroupKFold, shuffled by `seed`); a forecaster that can
`fit` is trained afresh per fold on the other problems only, so every score is on problems the
model never saw; what `fit` returns is the forecaster scored (scikit-learn's `fit` returns
self; `workbench.forecast.fitted.CachedLearned.fit` returns a fit loaded from the fit cache).
Forecasters without `fit` (roofline, LLMs) are simply asked about every row.
Cross-GPU: train on `train_gpu` measurements, score on `test_gpu` ones (still by held-out
problem unless split="none"). `test_problems` replaces the folds by one fixed held-out set: a
trainable forecaster is fitted once on every other problem and scored on those only (a
prospective test: problems added after the forecaster's design was fixed).

True bins come from the measured speedups under one label convention (`bin_convention`,
`workbench.bins.CONVENTIONS`; default the prompt's table) and every result names it. The
predicted bin of accuracy, off-by-one, ECE and AURC is the argmax, or with
predicted_bin="stated" the bin the forecaster stated (the GPU Forecasters study's rule; the
argmax where a forecast states none).

Failed candidates are not scored (the study keeps them out of the forecast task) but they do
train a learned forecaster's p_fail.

A forecaster is given the scored rows' measured reference times before it forecasts them
(`Forecaster.with_reference_times`; the learned forecaster uses them with
reference_time="measured"): what a user has once the problem's reference has been timed on the
test GPU (one timing per problem and GPU), and never a candidate's time.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Callable, Sequence, Union

import numpy as np
from sklearn.model_selection import GroupKFold

from workbench import bins
from workbench.calibration import metrics, selective
from workbench.errors import ConfigError
from workbench.forecast.base import Forecaster
from workbench.evaluate.report import write_outputs
from workbench.evaluate.result import METRIC_KEYS, EvaluationResult  # noqa: F401 (METRIC_KEYS re-exported)
from workbench.records import Candidate, Forecast, Hardware, Measurement, Problem

SPLITS = ("heldout-problems", "none")
ForecasterOrFactory = Union[Forecaster, Callable[[], Forecaster]]


def _hardware(m: Measurement) -> Hardware:
    return m.hardware or Hardware(key=m.hardware_key, name=m.hardware_key)


def _make(forecaster_or_factory: ForecasterOrFactory) -> Forecaster:
    """A fresh forecaster: call a factory, or deep-copy an (unfitted) instance."""
    if isinstance(forecaster_or_factory, Forecaster):
        return copy.deepcopy(forecaster_or_factory)
    made = forecaster_or_factory()
    if not isinstance(made, Forecaster):
        raise ConfigError("the factory must return a workbench.forecast.Forecaster")
    return made


def _only_gpu(measurements: Sequence[Measurement]) -> str:
    keys = sorted({m.hardware_key for m in measurements})
    if len(keys) != 1:
        raise ConfigError(f"measurements come from {len(keys)} GPUs ({', '.join(keys) or 'none'}); "
                          "name one with gpu= (CLI: --gpu)")
    return keys[0]


def _forecast_rows(fc: Forecaster, rows: list[tuple[Problem, Candidate, Measurement]]
                   ) -> list[Forecast]:
    """Reference-relative forecasts of rows, batched per hardware record; order kept. The
    forecaster is told the rows' measured reference times first (`with_reference_times`)."""
    fc = fc.with_reference_times([m for _, _, m in rows])
    out: list[Forecast | None] = [None] * len(rows)
    by_hw: dict[str, list[int]] = {}
    hws: dict[str, Hardware] = {}
    for i, (_, _, m) in enumerate(rows):
        hw = _hardware(m)
        by_hw.setdefault(hw.fingerprint, []).append(i)
        hws[hw.fingerprint] = hw
    for fp, idx in by_hw.items():
        fs = fc.forecast_batch([(rows[i][0], rows[i][1]) for i in idx], hws[fp])
        for i, f in zip(idx, fs):
            out[i] = f
    return out  # type: ignore[return-value]


def evaluate(forecaster_or_factory: ForecasterOrFactory, problems: Sequence[Problem],
             candidates: Sequence[Candidate], measurements: Sequence[Measurement],
             split: str = "heldout-problems", folds: int = 5, seed: int = 0,
             gpu: str | None = None, train_gpu: str | None = None, test_gpu: str | None = None,
             out: str | Path | None = None, k: float = 0.10,
             test_problems: Sequence[str] | None = None,
             bin_convention: str = bins.DEFAULT_CONVENTION,
             predicted_bin: str = "argmax") -> EvaluationResult:
    """Cross-validated metrics of a forecaster (see module doc); PNGs + metrics.json in `out`."""
    if bin_convention not in bins.CONVENTIONS:
        raise ConfigError(f"unknown bin convention {bin_convention!r}; use one of "
                          f"{', '.join(bins.CONVENTIONS)}")
    if predicted_bin not in metrics.PREDICTED_BIN_RULES:
        raise ConfigError(f"unknown predicted-bin rule {predicted_bin!r}; use one of "
                          f"{', '.join(metrics.PREDICTED_BIN_RULES)}")
    if split not in SPLITS:
        raise ConfigError(f"unknown split {split!r}; use one of {', '.join(SPLITS)}")
    if test_problems is not None and split != "heldout-problems":
        raise ConfigError("test_problems is a held-out set: use it with split='heldout-problems'")
    test_gpu = test_gpu or gpu or _only_gpu(measurements)
    train_gpu = train_gpu or gpu or test_gpu
    P = {p.id: p for p in problems}
    C = {c.id: c for c in candidates}
    known = [m for m in measurements if m.problem_id in P and m.candidate_id in C]
    held = set(test_problems) if test_problems is not None else None
    test_rows = [(P[m.problem_id], C[m.candidate_id], m) for m in known
                 if m.hardware_key == test_gpu and m.bin is not None
                 and (held is None or m.problem_id in held)]
    train_ms = [m for m in known if m.hardware_key == train_gpu]
    if not test_rows:
        where = "" if held is None else f" of the {len(held)} held-out problem(s)"
        raise ConfigError(f"no ok measurements{where} on {test_gpu} with a known problem and "
                          "candidate; load measurements first (`workbench dataset load-shipped`)")
    probe = _make(forecaster_or_factory)
    fittable = callable(getattr(probe, "fit", None))
    forecasts: list[Forecast | None] = [None] * len(test_rows)
    groups = np.asarray([p.id for p, _, _ in test_rows])
    n_groups = len(set(groups.tolist()))
    n_folds = 1
    fold_of_rows = np.full(len(test_rows), -1, dtype=int)
    if not fittable:
        forecasts = _forecast_rows(probe, test_rows)
    elif split == "none":
        fc = probe.fit(problems, candidates, train_ms)  # type: ignore[attr-defined]
        forecasts = _forecast_rows(fc, test_rows)
    elif held is not None:
        fc = probe.fit(problems, candidates,  # type: ignore[attr-defined]
                       [m for m in train_ms if m.problem_id not in held])
        forecasts = _forecast_rows(fc, test_rows)
    else:
        n_folds = min(folds, n_groups)
        if n_folds < 2:
            raise ConfigError(f"held-out-problem evaluation needs at least 2 problems, got "
                              f"{n_groups}; add problems or use split='none'")
        splitter = GroupKFold(n_splits=n_folds, shuffle=True, random_state=seed)
        for fold, (_, te) in enumerate(splitter.split(np.zeros(len(groups)), groups=groups)):
            fold_of_rows[te] = fold
            held_out = set(groups[te].tolist())
            fc = _make(forecaster_or_factory).fit(  # type: ignore[attr-defined]
                problems, candidates, [m for m in train_ms if m.problem_id not in held_out])
            for i, f in zip(te, _forecast_rows(fc, [test_rows[i] for i in te])):
                forecasts[i] = f
    fs: list[Forecast] = forecasts  # type: ignore[assignment]
    speedups = np.asarray([m.speedup for _, _, m in test_rows], dtype=float)
    y = np.asarray([bins.bin_of_convention(s, bin_convention) for s in speedups], dtype=int)
    result = EvaluationResult(
        forecaster=probe.name, split=split if fittable else "none (not trained)",
        train_gpu=train_gpu if fittable else "-", test_gpu=test_gpu,
        metrics=score(fs, y, speedups, groups, k, predicted_bin), per_problem_recovery={},
        forecasts=fs, true_bins=y, speedups=speedups,
        parents=[c.parent_id for _, c, _ in test_rows], fold_of_rows=fold_of_rows,
        bin_convention=bin_convention, predicted_bin=predicted_bin)
    result.metrics["folds"] = float(n_folds)
    scores = metrics.expected_log2(result.probabilities)
    result.per_problem_recovery = {str(g): v for g, v in metrics.top_k_recovery(
        scores, speedups, groups.tolist(), k).items()}
    if out is not None:
        result.plots = write_outputs(result, Path(out))
    return result


def score(forecasts: Sequence[Forecast], y: np.ndarray, speedups: np.ndarray,
          groups: np.ndarray, k: float = 0.10, predicted_bin: str = "argmax") -> dict[str, float]:
    """METRIC_KEYS (+ n, n_problems, n_abstained, sharpness, aurc_trapezoid, aurc_regret) of
    aligned forecasts and measurements.

    The predicted bin is the argmax or, with predicted_bin="stated", each forecast's stated bin
    where it has one (`n_stated` counts those). Risk-coverage uses the max-probability
    confidence: `aurc` is the bin-error AURC by the step rule, `aurc_trapezoid` the same curve by
    the trapezoid rule (no coverage-0 point), `aurc_regret` the step-rule area under the regret
    curve (`selective.regret_curve`, octaves). Abstentions are scored with their uniform
    probabilities and are never covered in AURC."""
    probs = selective.probabilities(forecasts)
    stated = [f.stated_bin for f in forecasts] if predicted_bin == "stated" else None
    pred = metrics.predicted_bins(probs, stated)
    out = metrics.summary(probs, y, speedups, groups.tolist(), k, predicted=pred)
    conf = selective.forecast_confidences(forecasts, "maxprob")
    curve = selective.risk_coverage(conf, (pred != np.asarray(y)).astype(float))
    out["aurc"] = curve.aurc
    out["aurc_trapezoid"] = curve.aurc_trapezoid
    out["aurc_regret"] = selective.regret_curve(conf, metrics.expected_log2(probs), speedups,
                                                groups.tolist()).aurc
    out["n_problems"] = float(len(set(groups.tolist())))
    out["n_abstained"] = float(sum(f.abstained for f in forecasts))
    out["n_stated"] = float(sum(f.stated_bin is not None for f in forecasts))
    return out


def save_json(results: Sequence[EvaluationResult], path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([r.to_json() for r in results], indent=2, default=float))
    return path
