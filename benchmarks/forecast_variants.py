"""Learned-forecaster variants under the same problem-level folds: how far each moves off-by-one.

    .venv/bin/python benchmarks/forecast_variants.py --save-features FEATURES.npz [--gpu h100]
    PYTHONPATH=. python benchmarks/forecast_variants.py --features FEATURES.npz --jobs 16 \\
        [--variants 'default;leaf50'] [--seeds 5] [--out DIR]
    python benchmarks/forecast_variants.py --merge PARTIAL.json [--commit SHA] [--into RESULTS.json]

The first form builds the feature matrix of the shipped --gpu data once (features need the
reference traces, so they are built where the app's stack is installed) and saves it with the
measured speedups, problem ids, each problem's measured eager reference time on that GPU (the
median over its measurements), each problem's reference ATen ops and dtype, and the torch
version that built it. The second form runs every
variant below through the cross-validation of benchmarks/forecast_bench.py --split-seeds
(GroupKFold over problems, 5 folds, shuffled by seeds 0..N-1; a fold's model trains on every
measurement of the other problems, failures included, and is scored on the fold's ok rows), so
variant and seed pair up: `default` reproduces forecast-splits-estimate-reference-<gpu>.json and
`measured_reference_auto` forecast-splits-<gpu>.json, and each variant's `delta_off_by_one` is its
off-by-one minus the default's on the same folds.

Variants (each fixed before its run except where said; measured_reference_auto is the shipped
default forecaster, the others are not used by the app):

- default                 LearnedForecaster(reference_time="estimate"): the estimated reference
                          time only (the shipped default before the measured time);
- leaf50, leaf200         min_samples_leaf 50 / 200 (default 100);
- iter50                  max_iter 50 (default 100);
- nodes7                  max_leaf_nodes 7 (default 15);
- classifier              gradient-boosted bin classifier with a temperature (learned_variants.py);
- ens5_features50         the median is the mean of 5 regressors, each drawing half the
                          features per split (max_features=0.5, random_state 0..4);
- local_residuals         a row's residuals are weighted by how close their out-of-fold median
                          is to its median (Gaussian, 1 octave), not pooled;
- scaled_residuals        a second regressor predicts each row's |residual| (out of fold for the
                          calibration rows); the pooled residuals are standardised by it and
                          rescaled per row (a spread per candidate);
- measured_reference      the feature ref_log10_us (the reference's time, estimated from its
                          trace) replaced by the measured eager reference time of the problem on
                          that GPU: the one measurement a search makes before any candidate;
- measured_reference_everywhere  the measured time replaces the estimate in every feature built
                          from it: ref_log10_us, the roofline term log2_ideal_speedup (which the
                          regression target is taken relative to) and ref_launch_share;
- measured_reference_auto the forecaster's own reference_time="measured" (reference_use "auto"):
                          each fold's model picks "feature" (as measured_reference) or
                          "everywhere" (as measured_reference_everywhere) by its out-of-fold
                          error on its training problems (added after the results of
                          measured_reference and measured_reference_everywhere had been seen, so
                          not fixed before its data was in view: the choice between them is left
                          to the training folds instead of to the evaluation);
- reference_error         one feature added: log2(measured / estimated reference time), the
                          estimate's error, so trees can learn when it matters;
- ops_neighbour_offset    a problem-level correction: each training problem's median
                          out-of-fold error (the inner folds'), and a new problem gets the
                          similarity-weighted mean of its 5 nearest training problems' errors,
                          shrunk toward 0 (weight 1), where similarity is the cosine between the
                          references' ATen-op bags (traced on the meta device, idf-weighted, plus
                          the dtype); the residual distribution is built from errors corrected
                          the same way, each problem's from the others (leave one problem out).

Diagnostics of measured_reference_auto (`metrics.measured_reference_auto.diagnostics`): the
off-by-one and ECE of the same fitted models when the test problems' reference times are unknown
(`estimate_fallback_*`: their features keep the estimate, as a search's first forecasts do
before anything is measured where the database holds no time for the problem).

Diagnostics of the default (`metrics.default.diagnostics`, per seed): the off-by-one of the bin
that holds the forecast median (instead of the distribution's most likely bin), the off-by-one
the same medians would reach if each test problem's own median error were known and removed
(`oracle_offset_off_by_one`: an upper bound for any problem-level correction), the spread (sd)
of those per-problem median errors and the median absolute error left within a problem, in
octaves (log2).

`--merge` adds the variants of a partial run (written with --out) to the committed results
file: every run present in both must agree on every metric they both hold (so the default, which
a partial run includes, must reproduce the committed one exactly), the feature files must match,
and the summaries are recomputed from the union of the runs; `setup.runs_from` lists each part's
commit, variants and time. `--commit` names the code commit of the partial run when its own
record is wrong (a device copy can carry stale git history); the file says so. Setting
WORKBENCH_COMMIT for the run itself (benchmarks/_common.commit) records the right one at once.

Writes benchmarks/results/forecast-variants-<gpu>.json ({"benchmark": "forecast-variants",
"gpu", "date", "commit", "metrics": {variant: {metric: {per_seed, mean, sd, min, max}}},
"setup"}); a run of a subset of the variants or of fewer than 5 seeds goes to --out only.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np
from sklearn.model_selection import GroupKFold

from workbench import bins
from workbench.calibration import metrics
from workbench.forecast import learned as L
from workbench.forecast.features import FEATURE_NAMES

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import commit, write_results  # noqa: E402
from learned_variants import (BinClassifier, Ensemble, LocalResiduals,  # noqa: E402
                              OpsNeighbourOffset, ScaledResiduals)

RESULTS_DIR = Path(__file__).resolve().parent / "results"
METRICS = ("off_by_one", "accuracy", "ece", "brier", "top10_recovery_median")


#: name -> (class, constructor keywords, how the measured reference time enters: None (not at
#: all), "feature" (ref_log10_us), "everywhere" (ref_log10_us, log2_ideal_speedup,
#: ref_launch_share) or "error_feature" (a column log2(measured / estimated) added), or "auto"
#: (the forecaster enters them itself, `fit_matrix(..., reference_ms=)`))
VARIANTS = {
    "default": (L.LearnedForecaster, {"reference_time": "estimate"}, None),
    "leaf50": (L.LearnedForecaster, {"min_samples_leaf": 50}, None),
    "leaf200": (L.LearnedForecaster, {"min_samples_leaf": 200}, None),
    "iter50": (L.LearnedForecaster, {"max_iter": 50}, None),
    "nodes7": (L.LearnedForecaster, {"max_leaf_nodes": 7}, None),
    "classifier": (BinClassifier, {}, None),
    "ens5_features50": (Ensemble, {}, None),
    "local_residuals": (LocalResiduals, {}, None),
    "scaled_residuals": (ScaledResiduals, {}, None),
    "measured_reference": (L.LearnedForecaster, {}, "feature"),
    "measured_reference_everywhere": (L.LearnedForecaster, {}, "everywhere"),
    "measured_reference_auto": (L.LearnedForecaster, {"reference_time": "measured"}, "auto"),
    "reference_error": (L.LearnedForecaster, {}, "error_feature"),
    "ops_neighbour_offset": (OpsNeighbourOffset, {}, None),
}


def with_measured_reference(X: np.ndarray, reference_ms: np.ndarray, mode: str | None) -> np.ndarray:
    """X with the measured reference time (ms, NaN where unknown) entered as `mode` says."""
    if mode is None or mode == "auto":
        return X
    if mode != "error_feature":
        return L.measured_reference_matrix(X, reference_ms, mode)
    return np.column_stack([X, L.reference_time_error(X, reference_ms)])


def parse_variants(text: str) -> list[str]:
    names = [v.strip() for v in text.split(";") if v.strip()]
    unknown = [v for v in names if v not in VARIANTS]
    if unknown or "default" not in names:
        raise SystemExit(f"unknown variants {unknown} (separate with ';'; known: {'; '.join(VARIANTS)}); "
                         "'default' (the baseline of the deltas) must be included")
    return names


def save_features(path: Path, gpu: str, data: Path | None) -> dict:
    """Feature matrix, speedups, problem ids and measured reference times of the shipped `gpu` rows."""
    import torch

    from workbench.dataset import DEFAULT_SHIPPED_DIR, load_shipped
    from workbench.forecast.features import feature_matrix

    problems, candidates, measurements = load_shipped(data or DEFAULT_SHIPPED_DIR)
    rows = L.training_rows(problems, candidates, [m for m in measurements if m.hardware_key == gpu])
    if not rows:
        raise SystemExit(f"no {gpu} measurements in the shipped data")
    if any(m.reason == "synthetic" for *_, m in rows):
        raise SystemExit("the data holds synthetic measurements; this benchmark runs on real ones only")
    from workbench.forecast import reference_profile

    ref: dict[str, list[float]] = {}
    for p, _, _, m in rows:
        if m.reference_ms:
            ref.setdefault(p.id, []).append(m.reference_ms)
    X = feature_matrix([(p, c, h) for p, c, h, _ in rows])
    speedups = np.asarray([m.speedup if m.bin is not None else np.nan for *_, m in rows], float)
    groups = np.asarray([p.id for p, *_ in rows])
    reference_ms = np.asarray([float(np.median(ref[p.id])) if p.id in ref else np.nan
                               for p, *_ in rows])
    info = {"gpu": gpu, "torch": torch.__version__, "rows": len(rows),
            "ok_rows": int(np.isfinite(speedups).sum()), "problems": len(set(groups.tolist())),
            "feature_names": list(FEATURE_NAMES)}
    problem_ops = {}
    for p in {p.id: p for p, *_ in rows}.values():
        ops: dict[str, int] = {}
        for op in reference_profile.profile(p).ops:
            ops[op.name] = ops.get(op.name, 0) + 1
        problem_ops[p.id] = {"ops": ops, "dtype": p.dtype}
    np.savez_compressed(path, X=X, speedups=speedups, groups=groups, reference_ms=reference_ms,
                        info=json.dumps(info), problem_ops=json.dumps(problem_ops))
    return info


def _load(path: Path):
    d = np.load(path, allow_pickle=False)
    info = json.loads(str(d["info"]))
    if info["feature_names"] != list(FEATURE_NAMES):
        raise SystemExit(f"{path} was built with other features; rebuild it with --save-features")
    info["problem_ops"] = json.loads(str(d["problem_ops"])) if "problem_ops" in d.files else None
    return d["X"], d["speedups"], d["groups"], d["reference_ms"], info


def default_diagnostics(median: np.ndarray, speedups: np.ndarray, groups: np.ndarray,
                        y: np.ndarray) -> dict:
    """What bounds the default's off-by-one: see the module doc. `median`: out-of-fold log2
    medians of the scored rows, `speedups` their measured speedups, `groups` their problems,
    `y` their measured bins."""
    near = np.abs(metrics.bins_of_log2(median) - y) <= 1
    return {"median_bin_off_by_one": float(np.mean(near)),
            **metrics.problem_offsets(median, speedups, groups.tolist())}


def run_one(path: str, name: str, seed: int, folds: int = 5) -> dict:
    """One variant's cross-validated metrics on one fold seed."""
    X, speedups, groups, reference_ms, info = _load(Path(path))
    cls, kwargs, mode = VARIANTS[name]
    X = with_measured_reference(X, reference_ms, mode)
    if cls is OpsNeighbourOffset:
        if not info["problem_ops"]:
            raise SystemExit(f"{path} holds no reference ops; rebuild it with --save-features")
        kwargs = {**kwargs, "problem_ops": info["problem_ops"]}
    ok = np.isfinite(speedups)
    Xo, so, go = X[ok], speedups[ok], groups[ok]
    y = np.asarray([bins.bin_of(s) for s in so], dtype=int)
    probs = np.zeros((len(y), bins.N_BINS))
    median = np.zeros(len(y))
    t0 = time.time()
    picks: list[str] = []
    fallback = np.zeros((len(y), bins.N_BINS))
    for _, te in GroupKFold(n_splits=folds, shuffle=True, random_state=seed).split(Xo, groups=go):
        train = ~np.isin(groups, np.unique(go[te]))
        if mode == "auto":
            fc = cls(n_threads=1, **kwargs).fit_matrix(X[train], speedups[train], groups[train],
                                                       reference_ms=reference_ms[train])
            picks.append(fc.reference_use_)
            Xt = L.measured_reference_matrix(Xo[te], reference_ms[ok][te], fc.reference_use_)
            probs[te] = fc.predict_proba(Xt)
            fallback[te] = fc.predict_proba(Xo[te])  # the test problems' times unknown
            continue
        fc = cls(n_threads=1, **kwargs).fit_matrix(X[train], speedups[train], groups[train])
        if cls is OpsNeighbourOffset:
            probs[te] = fc.predict_proba_for(Xo[te], go[te].tolist())
        else:
            probs[te] = fc.predict_proba(Xo[te])
        if name == "default":
            median[te] = fc.predict_median(Xo[te])
    out = {"off_by_one": metrics.off_by_one_accuracy(probs, y), "accuracy": metrics.accuracy(probs, y),
           "ece": metrics.ece(probs, y), "brier": metrics.brier(probs, y),
           "top10_recovery_median": metrics.top_k_recovery_median(
               metrics.expected_log2(probs), so, go.tolist(), 0.10)}
    if name == "default":
        out["diagnostics"] = default_diagnostics(median, so, go, y)
    if picks:
        out["reference_use_per_fold"] = picks
        out["diagnostics"] = {"estimate_fallback_off_by_one": metrics.off_by_one_accuracy(fallback, y),
                              "estimate_fallback_ece": metrics.ece(fallback, y)}
    return {"variant": name, "seed": seed, "seconds": round(time.time() - t0, 1), **out}


def _stats(values: list[float]) -> dict:
    return {"per_seed": values, "mean": statistics.fmean(values),
            "sd": statistics.stdev(values) if len(values) > 1 else 0.0,
            "min": min(values), "max": max(values)}


def summarise(results: list[dict], seeds: list[int]) -> dict:
    """{variant: {metric: stats over seeds, "delta_off_by_one": stats of variant - default}}."""
    by = {(r["variant"], r["seed"]): r for r in results}
    out = {}
    for name in dict.fromkeys(r["variant"] for r in results):
        if not all((name, s) in by for s in seeds):
            continue
        row = {k: _stats([by[name, s][k] for s in seeds]) for k in METRICS}
        if all(("default", s) in by for s in seeds):
            row["delta_off_by_one"] = _stats([by[name, s]["off_by_one"] - by["default", s]["off_by_one"]
                                              for s in seeds])
        row["seconds_per_seed"] = statistics.fmean(by[name, s]["seconds"] for s in seeds)
        if all("diagnostics" in by[name, s] for s in seeds):
            row["diagnostics"] = {k: _stats([by[name, s]["diagnostics"][k] for s in seeds])
                                  for k in by[name, seeds[0]]["diagnostics"]}
        if all("reference_use_per_fold" in by[name, s] for s in seeds):
            row["reference_use_per_fold"] = {str(s): by[name, s]["reference_use_per_fold"] for s in seeds}
        out[name] = row
    return out


def _variant_setup(names: list[str]) -> dict:
    return {n: {"class": VARIANTS[n][0].__name__, "kwargs": VARIANTS[n][1], "reference": VARIANTS[n][2]}
            for n in names}


def _part(doc: dict, commit: str | None = None) -> dict:
    part = {"commit": commit or doc["commit"], "date": doc["date"],
            "variants": list(doc["setup"]["variants"]), "jobs": doc["setup"].get("jobs"),
            "seconds": doc["setup"].get("seconds")}
    if commit and commit != doc["commit"]:
        part["recorded_commit"] = doc["commit"]
        part["commit_note"] = ("the run recorded recorded_commit (the device copy's stale git "
                               "history); commit is the tree that ran")
    return part


def merge(committed: dict, partial: dict, commit: str | None = None) -> dict:
    """The committed results with a partial run's variants added (see the module doc)."""
    for key in ("benchmark", "gpu"):
        if committed[key] != partial[key]:
            raise SystemExit(f"cannot merge: {key} {partial[key]!r} differs from {committed[key]!r}")
    if committed["setup"]["features"] != partial["setup"]["features"]:
        raise SystemExit("cannot merge: the partial run used another feature file "
                         f"({partial['setup']['features']} vs {committed['setup']['features']})")
    seeds = committed["setup"]["seeds"]
    if partial["setup"]["seeds"] != seeds:
        raise SystemExit(f"cannot merge: seeds {partial['setup']['seeds']} differ from {seeds}")
    runs = {(r["variant"], r["seed"]): r for r in committed["runs"]}
    for r in partial["runs"]:
        old = runs.get((r["variant"], r["seed"]))
        if old is not None:
            differ = [k for k in METRICS if k in old and k in r and old[k] != r[k]]
            if differ:
                raise SystemExit(f"cannot merge: {r['variant']} seed {r['seed']} does not reproduce "
                                 f"the committed {', '.join(differ)}")
        runs[r["variant"], r["seed"]] = r
    parts = committed["setup"].get("runs_from") or [_part(committed)]
    doc = dict(committed)
    doc["date"], doc["commit"] = partial["date"], commit or partial["commit"]
    doc["metrics"] = summarise(list(runs.values()), seeds)
    names = list(dict.fromkeys([*committed["setup"]["variants"], *partial["setup"]["variants"]]))
    doc["setup"] = {**committed["setup"], "variants": _variant_setup(names),
                    "runs_from": parts + [_part(partial, commit)]}
    doc["setup"].pop("jobs", None), doc["setup"].pop("seconds", None)
    doc["runs"] = sorted(runs.values(), key=lambda r: (r["variant"], r["seed"]))
    return doc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--data", default=None, help="shipped-data directory (--save-features)")
    ap.add_argument("--save-features", default=None, metavar="NPZ")
    ap.add_argument("--features", default=None, metavar="NPZ")
    ap.add_argument("--variants", default=";".join(VARIANTS))
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", default=None, help="also write the results file into this directory")
    ap.add_argument("--merge", default=None, metavar="PARTIAL_JSON",
                    help="add a partial run's variants to the committed results file")
    ap.add_argument("--commit", default=None, help="with --merge: the partial run's code commit")
    ap.add_argument("--into", default=None, metavar="JSON",
                    help="with --merge: the results file to add to (default: the committed "
                         "forecast-variants-<gpu>.json)")
    args = ap.parse_args(argv)
    if args.merge:
        path = Path(args.into) if args.into else RESULTS_DIR / f"forecast-variants-{args.gpu}.json"
        doc = merge(json.loads(path.read_text()), json.loads(Path(args.merge).read_text()), args.commit)
        path.write_text(json.dumps(doc, indent=1) + "\n")
        print(f"wrote {path} ({len(doc['metrics'])} variants)")
        return 0
    if args.save_features:
        info = save_features(Path(args.save_features), args.gpu, Path(args.data) if args.data else None)
        print(json.dumps({k: v for k, v in info.items() if k != "feature_names"}))
        return 0
    if not args.features:
        raise SystemExit("give --save-features NPZ (build) or --features NPZ (run)")
    names = parse_variants(args.variants)
    _, _, _, _, info = _load(Path(args.features))
    if "ops_neighbour_offset" in names and not info["problem_ops"]:
        raise SystemExit(f"{args.features} holds no reference ops (built before they were saved); "
                         "rebuild it with --save-features")
    if info["gpu"] != args.gpu:
        raise SystemExit(f"{args.features} holds {info['gpu']} rows, not {args.gpu}")
    seeds = list(range(args.seeds))
    # the slow variants first, so the pool ends together
    tasks = sorted(((n, s) for s in seeds for n in names), key=lambda t: (VARIANTS[t[0]][0] is not Ensemble, t[1]))
    t0, results = time.time(), []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_one, args.features, n, s) for n, s in tasks]
        for i, f in enumerate(as_completed(futures), 1):
            results.append(f.result())
            r = results[-1]
            print(f"[{i}/{len(tasks)}] {r['variant']} seed {r['seed']}: off-by-one {r['off_by_one']:.4f} "
                  f"ece {r['ece']:.3f} ({r['seconds']:.0f} s)", file=sys.stderr, flush=True)
    doc = {"benchmark": "forecast-variants", "gpu": args.gpu, "date": time.strftime("%Y-%m-%d"),
           "commit": commit(), "metrics": summarise(results, seeds),
           "setup": {"seeds": seeds, "folds": 5,
                     "features": {k: v for k, v in info.items() if k not in ("feature_names", "problem_ops")},
                     "variants": _variant_setup(names),
                     "jobs": args.jobs, "seconds": round(time.time() - t0, 1)},
           "runs": sorted(results, key=lambda r: (r["variant"], r["seed"]))}
    full = names == list(VARIANTS) and args.seeds >= 5
    for p in write_results(RESULTS_DIR, f"forecast-variants-{args.gpu}.json", json.dumps(doc, indent=1) + "\n",
                           full, args.out, "a partial run (a subset of variants, or fewer than 5 seeds) "
                           "is written only to --out DIR"):
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
