"""Forecast benchmark: learned vs roofline forecasters on the shipped GPU measurements.

    .venv/bin/python benchmarks/forecast_bench.py [--data DIR] [--gpu h100] [--cross-gpu h200]
        [--kind regression|classifier] [--ideal-offset auto|SHARE] [--split-seeds N]
        [--prospective-after DATE] [--reference-time estimate|measured]

Reads the shipped data (kernels_cache/shipped/, `workbench.dataset.load_shipped`), runs
problem-level cross-validation for the learned and roofline forecasters and the two controls
(`random`: seeded random order, uniform probabilities; `climatology`: training-fold bin
frequencies; workbench/forecast/controls.py) on --gpu, on the same rows and folds, and for the
learned forecaster and the controls trains on --gpu and scores on --cross-gpu (held-out problems
too; keys cross_gpu, cross_gpu_random, cross_gpu_climatology). Each forecaster's block of
"metrics" holds, beside the study's metrics, the discriminative ones of
`workbench.calibration.discrimination` with 95% bootstrap CIs over problems (`<key>_ci`,
--bootstrap resamples): pair_acc_125, pair_acc_110, sibling_hit_top4, sibling_ratio,
random16_hit_top4, random16_ratio, brier_skill, crps_skill (against the climatology of the same
folds), ece, sharpness, spearman_within_median, top10_recovery_median; and "vs_random": the
difference to the random control of the same setting with its paired CI. Labels use the prompt's
bin table ("bin_convention"). The skill table is printed. With --forecasts PATH the out-of-fold
forecasts of every forecaster are written as Parquet. Then it writes
benchmarks/results/forecast-<gpu>.json (with a fixed --ideal-offset SHARE, an ablation:
forecast-offset-<SHARE>-<gpu>.json, "benchmark": "forecast-offset-<SHARE>"). The learned
forecaster reads the reference's measured time on the GPU (reference_time="measured", the
default: each held-out problem's reference timed once, from its measurements,
never a candidate's time; which features it enters is chosen inside each fit); with
--reference-time estimate it reads only the analytic estimate and every results name gets
"-estimate-reference", e.g. forecast-estimate-reference-<gpu>.json:

    {"benchmark": "forecast", "gpu", "date", "commit", "data", "learned": {settings},
     "metrics": {"learned": {...}, "roofline": {...}, "cross_gpu": {...}}}

`--split-seeds N` measures how much the estimate depends on which problems share a fold: the
learned forecaster's cross-validation is repeated with the problems shuffled into folds by seeds
0..N-1 (the default run uses seed 0), and benchmarks/results/forecast-splits-<gpu>.json gets each
metric per seed with its mean, sample standard deviation, min and max
("benchmark": "forecast-splits").

`--split-seeds N --prospective-after DATE` also scores those cross-validated forecasts separately
on the rows of the problems first measured by DATE and of those added later.

`--prospective-after DATE` alone is a prospective test: the problems whose first --gpu measurement is
later than DATE (YYYY-MM-DD, or YYYY-MM-DDTHH[:MM[:SS]] UTC; problems added to the library
after the forecaster's design was fixed) are held out together, the learned forecaster is trained once on every other problem, and
both forecasters are scored on the held-out ones; benchmarks/results/forecast-prospective-<gpu>.json
("benchmark": "forecast-prospective") lists them.

The learned forecaster's settings are fixed a priori (no tuning on the test folds); its
calibration, its share of the roofline ideal (ideal_offset="auto") and the features the measured
reference time enters (reference_use="auto") are fitted inside each training fold only (see workbench/forecast/learned/).

Only real measurements belong in benchmarks/results: the script refuses data whose
measurements are marked synthetic unless --out points elsewhere.
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from workbench.dataset import DEFAULT_SHIPPED_DIR, load_shipped
from workbench.calibration import discrimination, metrics
from workbench.evaluate import METRIC_KEYS, evaluate, table
from workbench.evaluate.controls import (discrimination_reports, evaluate_with_controls,
                                         skill_table, write_forecasts)
from workbench.evaluate.crossval import score
from workbench.forecast import LearnedForecaster, RooflineForecaster
from workbench.forecast.controls import CONTROLS
from workbench.forecast.learned import OFFSET_GRID
from workbench.forecast.features import FEATURE_NAMES

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import commit  # noqa: E402
from learned_variants import BinClassifier  # noqa: E402

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def _metrics(result) -> dict[str, float]:
    out = {k: result.metrics[k] for k in METRIC_KEYS}
    # how much of the error is one offset per problem (metrics.problem_offsets)
    out.update({k: result.metrics[k] for k in metrics.OFFSET_KEYS if k in result.metrics})
    out.update(n=int(result.metrics["n"]), n_problems=int(result.metrics["n_problems"]),
               folds=int(result.metrics["folds"]))
    # Mean max-probability: above the accuracy = over-confident, below = under-confident.
    out["mean_confidence"] = float(result.probabilities.max(axis=1).mean())
    return out


def _load(data: Path, gpu: str, out: Path):
    """The shipped data at `data` as (problems, candidates, measurements, synthetic); exits when
    it has no `gpu` rows, or when synthetic rows would be written into benchmarks/results."""
    problems, candidates, measurements = load_shipped(data)
    keys = {m.hardware_key for m in measurements}
    if gpu not in keys:
        raise SystemExit(f"no {gpu} measurements in {data} (found: {', '.join(sorted(keys)) or 'none'})")
    synthetic = any(m.reason == "synthetic" for m in measurements)
    if synthetic and out.resolve().parent == RESULTS_DIR:
        raise SystemExit(f"{data} holds synthetic measurements; they never go to {RESULTS_DIR}")
    return problems, candidates, measurements, synthetic


def _factory(max_iter: int, kind: str, calibration_folds: int, ideal_offset: float | str,
             seed: int = 0, reference_time: str = "measured"):
    """A maker of fresh learned forecasters with these settings (one per training fold);
    kind "classifier" is the research bin classifier of learned_variants.py."""
    cls = BinClassifier if kind == "classifier" else LearnedForecaster
    return lambda: cls(max_iter=max_iter, seed=seed, calibration_folds=calibration_folds,
                       ideal_offset=ideal_offset, reference_time=reference_time)


def _write(out: Path, doc: dict) -> dict:
    """Write the results JSON `doc` to `out` (parents made) and return it."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=2, default=float) + "\n")
    print(f"wrote {out}")
    return doc


def _with_discrimination(results: dict, n_boot: int, seed: int) -> dict[str, dict]:
    """Each result's `_metrics` plus its discrimination report (CIs) and, for a forecaster that
    is not a control, "vs_random": its difference to the random control, paired CIs."""
    reports = discrimination_reports(results, n_boot=n_boot, seed=seed)
    print(skill_table(reports))
    out = {}
    for name, r in results.items():
        block = _metrics(r)
        block.update(reports[name].to_dict())
        block["bin_convention"] = r.bin_convention
        if name not in ("random", "climatology"):
            block["vs_random"] = discrimination.compare(reports[name], reports["random"])
        out[name] = block
    return out


def run(data: Path, gpu: str, cross_gpu: str | None, out: Path, folds: int = 5, seed: int = 0,
        plots: Path | None = None, max_iter: int = 100, kind: str = "regression",
        calibration_folds: int = 10, ideal_offset: float | str = "auto",
        reference_time: str = "measured", n_boot: int = 1000,
        forecasts: Path | None = None) -> dict:
    """Run the benchmark and write `out`; returns the JSON written."""
    problems, candidates, measurements, synthetic = _load(data, gpu, out)
    keys = {m.hardware_key for m in measurements}
    t0 = time.time()
    factory = _factory(max_iter, kind, calibration_folds, ideal_offset, seed, reference_time)
    probe = factory()
    results = evaluate_with_controls({"learned": factory, "roofline": RooflineForecaster()},
                                     problems, candidates, measurements, seed=seed, gpu=gpu,
                                     folds=folds, out=plots)
    print(table(list(results.values())), flush=True)
    blocks = _with_discrimination(results, n_boot, seed)
    cross = {}
    if cross_gpu and cross_gpu in keys:
        cross = evaluate_with_controls({"learned": factory}, problems, candidates, measurements,
                                       seed=seed, train_gpu=gpu, test_gpu=cross_gpu,
                                       folds=folds, out=plots)
        print(table(list(cross.values())), flush=True)
        for name, block in _with_discrimination(cross, n_boot, seed).items():
            blocks["cross_gpu" if name == "learned" else f"cross_gpu_{name}"] = block
    if forecasts is not None:
        both = dict(results) | {f"cross_gpu_{k}" if k != "learned" else "cross_gpu": v
                                for k, v in cross.items()}
        print(f"wrote {write_forecasts(both, forecasts)}")
    doc = {"benchmark": benchmark_name(ideal_offset, reference_time), "gpu": gpu,
           "learned_max_iter": max_iter,
           "learned": {"kind": getattr(probe, "kind", "regression"), "max_iter": max_iter,
                       "learning_rate": probe.learning_rate,
                       "calibration_folds": probe.calibration_folds,
                       "calibration_objective": getattr(probe, "calibration_objective", "match"),
                       "ideal_offset": probe.ideal_offset, "offset_grid": list(OFFSET_GRID),
                       "min_samples_leaf": probe.min_samples_leaf,
                       "reference_time": probe.reference_time,
                       "reference_use": probe.reference_use,
                       "n_features": len(FEATURE_NAMES)},
           "date": time.strftime("%Y-%m-%d", time.gmtime()), "commit": commit(),
           "data": str(data), "synthetic": synthetic, "seconds": round(time.time() - t0, 1),
           "bin_convention": results["learned"].bin_convention, "bootstrap": n_boot,
           "metrics": blocks}
    if "cross_gpu" in blocks:
        doc["metrics"]["cross_gpu"]["train_gpu"] = gpu
        doc["metrics"]["cross_gpu"]["test_gpu"] = cross_gpu
    return _write(out, doc)


def run_heldout(data: Path, gpu: str, out: Path, protocol_path: Path | None = None, seed: int = 0,
                max_iter: int = 100, kind: str = "regression", calibration_folds: int = 10,
                ideal_offset: float | str = "auto", reference_time: str = "measured", n_boot: int = 1000) -> dict:
    """The held-out protocol's headline (workbench/data/heldout_landscapes.toml or
    `protocol_path`): every forecaster is fitted once on the rows of the problems that are not
    held out (the learned one through GuardedForecaster, which raises HeldOutLeakError on any
    held-out row) and scored on the held-out problems only, beside the controls. Settings are the
    defaults fixed before the split; no choice is made here."""
    from workbench.landscape.protocol import guarded_factory, load_protocol

    protocol = load_protocol(protocol_path)
    problems, candidates, measurements, synthetic = _load(data, gpu, out)
    held = [pid for pid in protocol.heldout if any(m.problem_id == pid and m.hardware_key == gpu for m in measurements)]
    if not held:
        raise SystemExit(f"none of the {len(protocol.heldout)} held-out problems has {gpu} rows in {data}")
    t0 = time.time()
    factory = guarded_factory(_factory(max_iter, kind, calibration_folds, ideal_offset, seed, reference_time),
                              protocol, "fitting the learned forecaster")
    results = evaluate_with_controls({"learned": factory, "roofline": RooflineForecaster()}, problems, candidates,
                                     measurements, seed=seed, gpu=gpu, test_problems=list(protocol.heldout))
    print(table(list(results.values())), flush=True)
    doc = {"benchmark": "forecast-heldout", "gpu": gpu, "date": time.strftime("%Y-%m-%d", time.gmtime()),
           "commit": commit(), "data": str(data), "synthetic": synthetic, "seconds": round(time.time() - t0, 1),
           "protocol": protocol.describe(), "heldout_scored": held,
           "bin_convention": results["learned"].bin_convention, "bootstrap": n_boot,
           "metrics": _with_discrimination(results, n_boot, seed)}
    return _write(out, doc)


def run_splits(data: Path, gpu: str, out: Path, n_seeds: int, folds: int = 5, max_iter: int = 100,
               kind: str = "regression", calibration_folds: int = 10,
               ideal_offset: float | str = "auto", after: str | None = None,
               reference_time: str = "measured") -> dict:
    """The learned forecaster's problem-level cross-validation with fold seeds 0..n_seeds-1;
    writes `out` ("benchmark": "forecast-splits") and returns it. With `after` (YYYY-MM-DD) the
    same cross-validated forecasts are also scored on the rows of the problems first measured
    by that date ("learned_by_<after>") and of those added later ("learned_after_<after>")."""
    if n_seeds < 2:
        raise SystemExit(f"--split-seeds needs at least 2 seeds to show a spread, got {n_seeds}")
    problems, candidates, measurements, synthetic = _load(data, gpu, out)
    t0 = time.time()
    factory = _factory(max_iter, kind, calibration_folds, ideal_offset, 0, reference_time)
    late = set(added_after(measurements, gpu, after)) if after else set()
    per_seed: dict[str, list[dict]] = {"learned": [], **{name: [] for name in CONTROLS}}
    if after:
        per_seed.update({f"learned_by_{after}": [], f"learned_after_{after}": []})
    for seed in range(n_seeds):
        result = evaluate(factory, problems, candidates, measurements, gpu=gpu, folds=folds, seed=seed)
        per_seed["learned"].append(_metrics(result))
        # The controls on the same folds (no fit: seconds), so every seed's figure has its controls.
        for name, r in evaluate_with_controls({}, problems, candidates, measurements, seed=seed, gpu=gpu,
                                              folds=folds).items():
            per_seed[name].append(_metrics(r))
        print(f"fold seed {seed}: " + ", ".join(f"{k} {per_seed['learned'][-1][k]:.4f}"
                                                for k in METRIC_KEYS), flush=True)
        if after:
            is_late = np.asarray([f.problem_id in late for f in result.forecasts])
            for name, rows in ((f"learned_by_{after}", ~is_late), (f"learned_after_{after}", is_late)):
                idx = np.flatnonzero(rows)
                per_seed[name].append(score([result.forecasts[i] for i in idx], result.true_bins[idx],
                                            result.speedups[idx],
                                            np.asarray([result.forecasts[i].problem_id for i in idx])))
    summary = {name: _spread(rows) for name, rows in per_seed.items()}
    doc = {"benchmark": "forecast-splits" + _reference_suffix(reference_time), "gpu": gpu, "date": time.strftime("%Y-%m-%d", time.gmtime()),
           "commit": commit(), "data": str(data), "synthetic": synthetic, "folds": folds,
           "split_seeds": list(range(n_seeds)), "learned": {"kind": kind, "max_iter": max_iter,
                                                            "ideal_offset": ideal_offset,
                                                            "reference_time": reference_time},
           "n": per_seed["learned"][0]["n"], "seconds": round(time.time() - t0, 1), "metrics": summary}
    if after:
        doc["after"], doc["problems_added_after"] = after, sorted(late)
    return _write(out, doc)


def _spread(per_seed: list[dict]) -> dict:
    """Each metric of METRIC_KEYS (and mean_confidence, where present) over the seeds: the
    per-seed values, mean, sample standard deviation, min and max."""
    out = {}
    for key in (*METRIC_KEYS, "mean_confidence"):
        if key in per_seed[0]:
            xs = [float(m[key]) for m in per_seed]
            out[key] = {"per_seed": xs, "mean": statistics.fmean(xs), "sd": statistics.stdev(xs),
                        "min": min(xs), "max": max(xs)}
    return out


def added_after(measurements, gpu: str, after: str) -> list[str]:
    """Problems whose earliest `gpu` measurement is later than `after`, sorted. `after` is a UTC
    date (YYYY-MM-DD) or a time of day on one (YYYY-MM-DDTHH, ...THH:MM or ...THH:MM:SS): the
    measurement times are compared at that precision."""
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}(T\d{2}(:\d{2}(:\d{2})?)?)?", after):
        raise SystemExit(f"--prospective-after {after!r}: expected YYYY-MM-DD or YYYY-MM-DDTHH[:MM[:SS]] (UTC)")
    first: dict[str, str] = {}
    for m in measurements:
        if m.hardware_key == gpu:
            at = m.measured_at[:len(after)]
            first[m.problem_id] = min(first.get(m.problem_id, at), at)
    return sorted(pid for pid, at in first.items() if at > after)


def run_prospective(data: Path, gpu: str, out: Path, after: str, max_iter: int = 100,
                    kind: str = "regression", calibration_folds: int = 10,
                    ideal_offset: float | str = "auto", reference_time: str = "measured") -> dict:
    """Train on the problems measured by `after`, score on those added later; writes `out`
    ("benchmark": "forecast-prospective") and returns it."""
    problems, candidates, measurements, synthetic = _load(data, gpu, out)
    held = added_after(measurements, gpu, after)
    n_all = len({m.problem_id for m in measurements if m.hardware_key == gpu})
    if not held or len(held) == n_all:
        raise SystemExit(f"--prospective-after {after}: {len(held)} of {n_all} {gpu} problems were "
                         "first measured after that date; pick a date that splits them")
    t0 = time.time()
    factory = _factory(max_iter, kind, calibration_folds, ideal_offset, 0, reference_time)
    results = evaluate_with_controls({"learned": factory, "roofline": RooflineForecaster()}, problems, candidates,
                                     measurements, seed=0, gpu=gpu, test_problems=held)
    print(table(list(results.values())))
    doc = {"benchmark": "forecast-prospective" + _reference_suffix(reference_time), "gpu": gpu,
           "date": time.strftime("%Y-%m-%d", time.gmtime()), "commit": commit(), "data": str(data),
           "synthetic": synthetic, "after": after, "test_problems": held,
           "n_train_problems": n_all - len(held),
           "learned": {"kind": kind, "max_iter": max_iter, "ideal_offset": ideal_offset,
                       "reference_time": reference_time},
           "seconds": round(time.time() - t0, 1),
           "metrics": {k: _metrics(r) for k, r in results.items()},
           "per_problem_recovery": {k: r.per_problem_recovery for k, r in results.items()},
           "per_problem_offset_log2": {k: per_problem_offsets(r) for k, r in results.items()}}
    return _write(out, doc)


def per_problem_offsets(result) -> dict[str, float]:
    """Each scored problem's offset: the median over its rows of log2(measured speedup) minus the
    expected log2-speedup forecast (octaves; > 0: the problem's candidates are faster than
    forecast), sorted by problem: `metrics.offsets_by_problem`."""
    offsets = metrics.offsets_by_problem([f.expected_log2_speedup for f in result.forecasts],
                                         result.speedups, [f.problem_id for f in result.forecasts])
    return dict(sorted(offsets.items()))


def benchmark_name(ideal_offset: float | str, reference_time: str = "measured") -> str:
    """"forecast" for the default forecaster; "forecast-offset-<share>" for a fixed share (an
    ablation, written to its own results file); "-estimate-reference" added with
    reference_time="estimate" (the default is "measured")."""
    name = "forecast" if ideal_offset == "auto" else f"forecast-offset-{float(ideal_offset):g}"
    return name + _reference_suffix(reference_time)


def _reference_suffix(reference_time: str) -> str:
    return "-estimate-reference" if reference_time == "estimate" else ""


def _offset(text: str) -> float | str:
    """--ideal-offset: 'auto' or a number >= 0."""
    if text == "auto":
        return text
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"expected 'auto' or a number >= 0, got {text!r}")
    return value


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_SHIPPED_DIR,
                    help="shipped-layout directory (default: kernels_cache/shipped)")
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--cross-gpu", default="h200", help="GPU to test transfer on ('' to skip)")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, help="JSON path (default benchmarks/results/forecast-<gpu>.json)")
    ap.add_argument("--max-iter", type=int, default=100,
                    help="boosting iterations of the learned forecaster (default 100)")
    ap.add_argument("--kind", choices=("regression", "classifier"), default="regression",
                    help="learned bin model: median regression + out-of-fold residual "
                    "distribution (default) or a bin classifier")
    ap.add_argument("--calibration-folds", type=int, default=10,
                    help="problem-grouped folds inside each training set for the out-of-fold "
                    "residuals and the temperature (default 10)")
    ap.add_argument("--ideal-offset", type=_offset, default="auto",
                    help="share of the roofline ideal the regression target is relative to: a "
                    "number >= 0, or 'auto' (chosen inside each fit; the default)")
    ap.add_argument("--reference-time", choices=("estimate", "measured"), default="measured",
                    help="the learned forecaster's reference time: measured on the GPU where "
                    "known (default; each held-out problem's reference timed once) or only the "
                    "analytic estimate (results files get '-estimate-reference' in their name)")
    ap.add_argument("--protocol", type=Path, nargs="?", const=Path("default"), default=None, metavar="TOML",
                    help="the held-out protocol's headline: fit on the non-held-out problems only and score "
                         "the held-out ones (default file: workbench/data/heldout_landscapes.toml)")
    ap.add_argument("--plots", type=Path, help="also write reliability/risk-coverage PNGs here")
    ap.add_argument("--bootstrap", type=int, default=1000, metavar="B",
                    help="bootstrap resamples of the problems for the CIs (default 1000)")
    ap.add_argument("--forecasts", type=Path, metavar="PATH",
                    help="also write every forecaster's out-of-fold forecasts to this Parquet file")
    ap.add_argument("--split-seeds", type=int, default=0, metavar="N",
                    help="instead: repeat the learned forecaster's cross-validation with fold seeds "
                    "0..N-1 and write forecast-splits-<gpu>.json (how much the estimate depends on the split)")
    ap.add_argument("--prospective-after", metavar="DATE",
                    help="instead: hold out the problems first measured after DATE (YYYY-MM-DD, or "
                    "YYYY-MM-DDTHH[:MM[:SS]] UTC for a later part of a day), "
                    "train on the others, write forecast-prospective-<gpu>.json")
    args = ap.parse_args(argv)
    if not args.data.is_dir():
        print(f"no shipped data at {args.data}; record it on a GPU first", file=sys.stderr)
        return 1
    if args.protocol is not None:
        path = None if str(args.protocol) == "default" else args.protocol
        run_heldout(args.data, args.gpu, args.out or RESULTS_DIR / f"forecast-heldout-{args.gpu}.json", path,
                    args.seed, args.max_iter, args.kind, args.calibration_folds, args.ideal_offset,
                    args.reference_time, args.bootstrap)
        return 0
    if args.split_seeds:
        suffix = _reference_suffix(args.reference_time)
        run_splits(args.data, args.gpu,
                   args.out or RESULTS_DIR / f"forecast-splits{suffix}-{args.gpu}.json",
                   args.split_seeds, args.folds, args.max_iter, args.kind, args.calibration_folds,
                   args.ideal_offset, args.prospective_after, args.reference_time)
        return 0
    if args.prospective_after:
        run_prospective(args.data, args.gpu,
                        args.out or RESULTS_DIR
                        / f"forecast-prospective{_reference_suffix(args.reference_time)}-{args.gpu}.json",
                        args.prospective_after, args.max_iter, args.kind, args.calibration_folds,
                        args.ideal_offset, args.reference_time)
        return 0
    out = args.out or RESULTS_DIR / f"{benchmark_name(args.ideal_offset, args.reference_time)}-{args.gpu}.json"
    run(args.data, args.gpu, args.cross_gpu or None, out, args.folds, args.seed, args.plots,
        args.max_iter, args.kind, args.calibration_folds, args.ideal_offset, args.reference_time,
        args.bootstrap, args.forecasts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
