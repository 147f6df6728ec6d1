"""Every forecaster scored beside the controls, on the same rows and folds, with skill over them.

    results = evaluate_with_controls({"learned": factory}, problems, candidates, measurements,
                                     gpu="h100", folds=5, seed=0)
    reports = discrimination_reports(results)         # per forecaster, climatology as reference
    print(skill_table(reports))
    write_forecasts(results, "eval/forecasts.parquet")

The controls (`workbench.forecast.controls`): "random" (seeded random order, uniform
probabilities) and "climatology" (training-fold bin frequencies). `evaluate` gives every
forecaster the same rows in the same order and, for fittable ones, the same folds (same seed), so
their out-of-fold forecasts are aligned row by row; `discrimination_reports` checks that before
comparing them.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import numpy as np

from workbench import bins
from workbench.calibration import discrimination
from workbench.errors import ConfigError
from workbench.evaluate.crossval import EvaluationResult, ForecasterOrFactory, evaluate
from workbench.forecast.controls import CONTROLS, make_control

#: The keys of the skill table, in order (those a report lacks are left blank).
TABLE_KEYS = ("pair_acc_125", "pair_acc_110", "sibling_hit_top4", "sibling_ratio",
              "random16_hit_top4", "brier_skill", "crps_skill", "ece", "sharpness",
              "spearman_within_median", "top10_recovery_median")
_SHORT = {"pair_acc_125": "pair1.25", "pair_acc_110": "pair1.10", "sibling_hit_top4": "sib@4",
          "sibling_ratio": "sib_ratio", "random16_hit_top4": "r16@4", "brier_skill": "BSS",
          "crps_skill": "CRPSS", "ece": "ECE", "sharpness": "sharp",
          "spearman_within_median": "rho_within", "top10_recovery_median": "top10"}


def evaluate_with_controls(forecasters: Mapping[str, ForecasterOrFactory], problems, candidates,
                           measurements, seed: int = 0,
                           bin_convention: str = bins.DEFAULT_CONVENTION,
                           **kwargs: Any) -> dict[str, EvaluationResult]:
    """`evaluate` each of `forecasters` (name -> forecaster or factory) and the controls
    (`CONTROLS`, seeded by `seed`) with the same arguments; returns name -> result, controls last.
    A name of `forecasters` that is a control replaces that control."""
    makers: dict[str, ForecasterOrFactory] = dict(forecasters)
    for name in CONTROLS:
        makers.setdefault(name, lambda name=name: make_control(name, seed, bin_convention))
    return {name: evaluate(make, problems, candidates, measurements, seed=seed,
                           bin_convention=bin_convention, **kwargs)
            for name, make in makers.items()}


def _aligned(a: EvaluationResult, b: EvaluationResult) -> bool:
    return ([f.candidate_id for f in a.forecasts] == [f.candidate_id for f in b.forecasts]
            and a.test_gpu == b.test_gpu and a.bin_convention == b.bin_convention)


def discrimination_reports(results: Mapping[str, EvaluationResult], reference: str = "climatology",
                           n_boot: int = 1000, seed: int = 0, **kwargs: Any
                           ) -> dict[str, discrimination.Report]:
    """`discrimination.report` of each result, with `reference`'s probabilities (the climatology
    of the same folds) as the skill reference and one problem order and seed for all, so their
    CIs come from the same resamples. Raises ConfigError when the results are not aligned."""
    if reference not in results:
        raise ConfigError(f"no {reference!r} result to measure skill against; evaluate it too "
                          "(evaluate_with_controls does)")
    ref = results[reference]
    order = list(dict.fromkeys(ref.problems))
    out = {}
    for name, r in results.items():
        if not _aligned(r, ref):
            raise ConfigError(f"{name} was scored on other rows than {reference}; evaluate both "
                              "with the same data, GPUs and bin convention")
        out[name] = discrimination.report(
            r.probabilities, r.true_bins, r.scores, r.speedups, r.problems,
            reference_probs=ref.probabilities, parents=r.parents, n_boot=n_boot, seed=seed,
            problem_order=order, **kwargs)
    return out


def skill_table(reports: Mapping[str, discrimination.Report], control: str = "random") -> str:
    """A text table: one row per forecaster with TABLE_KEYS, then one row per forecaster that
    is not a control with its difference to `control` and the 95% CI of the difference."""
    names = list(reports)
    values = {n: reports[n].values() for n in names}
    cols = [k for k in TABLE_KEYS if any(k in values[n] for n in names)]
    head = ["forecaster"] + [_SHORT[k] for k in cols]
    rows = [[n] + [_fmt(values[n].get(k)) for k in cols] for n in names]
    if control in reports:
        for n in names:
            if n in CONTROLS:
                continue
            diff = discrimination.compare(reports[n], reports[control])
            rows.append([f"{n} - {control}"] + [
                f"{diff[k]['diff']:+.3f} [{diff[k]['ci'][0]:+.3f},{diff[k]['ci'][1]:+.3f}]"
                if k in diff and np.isfinite(diff[k]["diff"]) else "" for k in cols])
    width = [max(len(str(r[i])) for r in [head] + rows) for i in range(len(head))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, width)),
             "  ".join("-" * w for w in width)]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, width)) for r in rows]
    return "\n".join(lines)


def _fmt(v) -> str:
    return "" if v is None or v != v else f"{v:.3f}"


def forecast_rows(results: Mapping[str, EvaluationResult]) -> list[dict[str, Any]]:
    """One dict per (forecaster, scored row): what is needed to recompute every metric."""
    rows = []
    for name, r in results.items():
        probs = r.probabilities
        scores = r.scores
        folds = r.fold_of_rows if len(r.fold_of_rows) == len(r.forecasts) else \
            np.full(len(r.forecasts), -1)
        for i, f in enumerate(r.forecasts):
            row = {"forecaster": name, "forecaster_name": r.forecaster, "problem_id": f.problem_id,
                   "candidate_id": f.candidate_id,
                   "parent_id": r.parents[i] if i < len(r.parents) else None,
                   "train_gpu": r.train_gpu, "test_gpu": r.test_gpu, "split": r.split,
                   "fold": int(folds[i]), "speedup": float(r.speedups[i]),
                   "true_bin": int(r.true_bins[i]) + 1, "bin_convention": r.bin_convention,
                   "score": float(scores[i]), "stated_bin": None if f.stated_bin is None
                   else int(f.stated_bin) + 1, "abstained": bool(f.abstained)}
            row.update({f"p_bin{b + 1}": float(probs[i, b]) for b in range(bins.N_BINS)})
            rows.append(row)
    return rows


def write_forecasts(results: Mapping[str, EvaluationResult], path: str | Path) -> Path:
    """Write `forecast_rows` to a Parquet file at `path` (parents made); returns the path. Bins
    are numbered 1..8 in it (true_bin, stated_bin, p_bin1..p_bin8)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(forecast_rows(results)), path)
    return path
