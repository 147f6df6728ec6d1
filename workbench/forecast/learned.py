"""A learned forecaster: gradient-boosted trees over static features, calibrated out of fold.

`LearnedForecaster().fit(problems, candidates, measurements)` trains, on the ok measurements,
one of two bin models (`kind`):

- "regression" (default): a `HistGradientBoostingRegressor` with an absolute-error loss (the
  median) on log2-speedup minus `ideal_offset` x the roofline's ideal log2-speedup
  (`log2_ideal_speedup`, computed for each GPU from its own peaks): the trees learn how far a
  candidate falls short of a shrunk roofline bound, so a problem outside the training range
  follows the roofline instead of a tree's flat extrapolation, and a GPU's peaks move the
  forecast. With `ideal_offset="auto"` (the default) the share is chosen from `OFFSET_GRID`
  inside `fit`, as the one with the smallest mean absolute out-of-fold error over the same
  problem-grouped folds that give the residuals (training rows only; `ideal_offset_`).
  The median is turned into a predictive distribution by adding the model's own
  *out-of-fold* residuals (folds grouped by problem, so they are the errors it makes on unseen
  problems): P(bin) = share of residuals r with median + r in that bin. The distribution is
  ordinal by construction, so neighbouring bins get mass together. A temperature T sharpens
  or flattens it (p ∝ p^(1/T)); T is fitted on out-of-fold bin probabilities in which each
  fold's rows get the other folds' residuals, so that the mean confidence (max probability)
  equals the accuracy there (`calibration_objective="match"`; NLL, Brier and ECE are options).
- "classifier": a `HistGradientBoostingClassifier` over the 8 bins with a temperature fitted on
  out-of-fold probabilities.

Everything fitted for calibration uses the training measurements only. A second classifier
gives p_fail (compile error, wrong output, crash, ...) from all measurements.

Features come from `workbench.forecast.features` and never name the problem, so the model
forecasts unseen problems. With `reference_time="measured"` the feature holding the reference's
time (`ref_log10_us`, by default the reference profile's roofline estimate) takes the reference's
*measured* eager time on that GPU wherever one is known (the median `reference_ms` of a
problem's measurements there: `fit` records the training measurements'; `with_reference_times`
returns a copy that knows more, e.g. the held-out problems' in `workbench.evaluate.crossval`: one
timing of the reference per problem and GPU, no candidate's time; `for_run` one that knows a
search run's); elsewhere the estimate stays. With
`reference_use="everywhere"` the measured time also replaces the estimate in the features
computed from it (the roofline term `log2_ideal_speedup`, so the target then follows the measured
reference, and `ref_launch_share`); "auto" (the default) takes whichever of the two has the
smaller out-of-fold error on the training problems. Times in the features are relative to each GPU's own roofline, so a model
trained on one GPU reads another's rows on the same scale. Parent-relative forecasts combine
the candidate's and the parent's reference-relative distributions (`relative_distribution`).
`save`/`load` use joblib.
"""
from __future__ import annotations

import copy
import math
from collections import OrderedDict
from pathlib import Path
from typing import Sequence

import joblib
import numpy as np
from scipy.optimize import minimize_scalar
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.model_selection import GroupKFold
from threadpoolctl import threadpool_limits

from workbench import bins
from workbench.errors import ConfigError, NotFittedError, WorkbenchError
from workbench.forecast.base import BatchForecaster, temper_unknown_counts
from workbench.forecast.features import FEATURE_NAMES, feature_matrix, log10_us, ms_of_log10_us
from workbench.records import Candidate, Forecast, Hardware, Measurement, Problem, RunEvidence

_MID = np.asarray(bins.LOG2_MIDPOINTS)
_LOG2_EDGES = np.log2(np.asarray(bins.EDGES))
_FORMAT = "workbench.learned/4"
_IDEAL = FEATURE_NAMES.index("log2_ideal_speedup")
_REF = FEATURE_NAMES.index("ref_log10_us")
_SHARE = FEATURE_NAMES.index("ref_launch_share")
KINDS = ("regression", "classifier")
#: Where the reference's time comes from: the analytic estimate only, or the measured time.
REFERENCE_TIMES = ("estimate", "measured")
#: Which features a measured reference time enters (reference_time="measured"): `ref_log10_us`
#: alone, every feature built from the reference's time, or the one of those two with the
#: smaller out-of-fold error on the training problems.
REFERENCE_USES = ("feature", "everywhere", "auto")


#: Shares of the ideal log2-speedup that `ideal_offset="auto"` chooses among.
OFFSET_GRID = (0.25, 0.5, 0.75, 1.0)


def _known_times(reference_ms) -> tuple[np.ndarray, np.ndarray]:
    """(the times as floats, the mask of rows with a measured time: finite and > 0)."""
    ms = np.asarray(reference_ms, dtype=float)
    return ms, np.isfinite(ms) & (ms > 0)


def reference_time_error(X: np.ndarray, reference_ms) -> np.ndarray:
    """(n,) log2(measured / estimated reference time) of each row of the estimate-based feature
    matrix X (the estimate read back from `ref_log10_us`); 0 where either is unknown."""
    ms, known = _known_times(reference_ms)
    estimated_ms = ms_of_log10_us(np.asarray(X)[:, _REF])
    both = known & (estimated_ms > 0)  # the estimate is positive wherever a reference was traced
    error = np.zeros(len(ms))
    error[both] = np.log2(ms[both] / estimated_ms[both])
    return error


def measured_reference_matrix(X: np.ndarray, reference_ms, use: str) -> np.ndarray:
    """A copy of the estimate-based feature matrix X with each row's measured reference time
    (`reference_ms`, ms, NaN or <= 0 where unknown) put in: `use`="feature" replaces
    `ref_log10_us`; "everywhere" also moves the features computed from the estimated time by
    the estimate's error e (`reference_time_error`): `log2_ideal_speedup` (reference ms over
    the candidate's ideal ms, so + e) and `ref_launch_share` (launch time over reference ms,
    so x 2^-e). Rows without a measured time keep the estimate."""
    if use not in ("feature", "everywhere"):
        raise ConfigError(f"use is 'feature' or 'everywhere', got {use!r}")
    X = np.array(X, dtype=float, copy=True)
    ms, known = _known_times(reference_ms)
    if use == "everywhere":
        error = reference_time_error(X, ms)  # before ref_log10_us is overwritten
        X[:, _IDEAL] += error
        X[:, _SHARE] *= 2.0 ** -error
    X[known, _REF] = [log10_us(v) for v in ms[known]]
    return X


def relative_distribution(p_child, p_parent, width: float = 0.5) -> np.ndarray:
    """Bin distribution of child/parent speedup from two reference-relative distributions.

    log2(child/parent) = log2 S_child - log2 S_parent, assumed independent. Each pair of bins
    contributes p_child[i] * p_parent[j] at (mid_i - mid_j) spread uniformly over `width`
    octaves (so mass at exactly 1.0x splits between the bins either side of the edge).
    """
    pc, pp = np.asarray(p_child, float), np.asarray(p_parent, float)
    pc, pp = pc / pc.sum(), pp / pp.sum()
    d = (_MID[:, None] - _MID[None, :]).ravel()
    w = (pc[:, None] * pp[None, :]).ravel()
    lo, hi = d - width / 2, d + width / 2
    edges = np.concatenate([[-np.inf], _LOG2_EDGES, [np.inf]])
    out = np.zeros(bins.N_BINS)
    for b in range(bins.N_BINS):
        overlap = np.clip(np.minimum(hi, edges[b + 1]) - np.maximum(lo, edges[b]), 0, None)
        out[b] = float(np.sum(w * overlap / width))
    return out / out.sum()


def _hardware(m: Measurement) -> Hardware:
    return m.hardware or Hardware(key=m.hardware_key, name=m.hardware_key)


def training_rows(problems: Sequence[Problem], candidates: Sequence[Candidate],
                  measurements: Sequence[Measurement]
                  ) -> list[tuple[Problem, Candidate, Hardware, Measurement]]:
    """Join measurements with their problem and candidate; unmatched measurements are dropped."""
    P = {p.id: p for p in problems}
    C = {c.id: c for c in candidates}
    rows = []
    for m in measurements:
        p, c = P.get(m.problem_id), C.get(m.candidate_id)
        if p is not None and c is not None:
            rows.append((p, c, _hardware(m), m))
    return rows


def _temperature(logp: np.ndarray, y: np.ndarray) -> float:
    """Temperature minimising the NLL of softmax(logp / T) at the true classes, T in [0.05, 20]."""
    def nll(log_t: float) -> float:
        z = logp / math.exp(log_t)
        z = z - z.max(axis=1, keepdims=True)
        lse = np.log(np.exp(z).sum(axis=1))
        return float(np.mean(lse - z[np.arange(len(y)), y]))
    res = minimize_scalar(nll, bounds=(math.log(0.05), math.log(20.0)), method="bounded")
    return float(math.exp(res.x))


OBJECTIVES = ("match", "nll", "brier", "ece")


def _temperature_for(p: np.ndarray, y: np.ndarray, objective: str) -> float:
    """Temperature T in [0.2, 5] for _sharpen(p, T) at the true bins `y`.

    "match": mean max-probability equals the accuracy (a smooth, monotone condition in T:
    the overall confidence gap of the reliability diagram is closed); "nll", "brier", "ece"
    (10 buckets): the T minimising that score."""
    from workbench.calibration import metrics

    if objective == "nll":
        return _temperature(np.log(p), y)
    if objective == "match":
        acc = float(np.mean(p.argmax(axis=1) == y))

        def loss(log_t: float) -> float:
            return (float(np.mean(_sharpen(p, math.exp(log_t)).max(axis=1))) - acc) ** 2
    else:
        score = metrics.brier if objective == "brier" else metrics.ece

        def loss(log_t: float) -> float:
            return float(score(_sharpen(p, math.exp(log_t)), y))

    res = minimize_scalar(loss, bounds=(math.log(0.2), math.log(5.0)), method="bounded")
    return float(math.exp(res.x))


def _sharpen(p: np.ndarray, temperature: float) -> np.ndarray:
    """p ∝ p^(1/T), row-wise."""
    z = np.log(p) / temperature
    z = np.exp(z - z.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


def residual_bin_probabilities(median: np.ndarray, residuals: np.ndarray,
                               floor: float = 0.002) -> np.ndarray:
    """(n, 8) bin probabilities of log2-speedup = median_i + r, r drawn from `residuals`
    (the empirical out-of-fold errors); every bin gets at least `floor` before renormalising."""
    v = np.asarray(median, float)[:, None] + np.asarray(residuals, float)[None, :]
    b = np.searchsorted(_LOG2_EDGES, v, side="left")  # closed on the right, as bins.bin_of
    p = np.stack([(b == k).mean(axis=1) for k in range(bins.N_BINS)], axis=1)
    p = np.maximum(p, floor)
    return p / p.sum(axis=1, keepdims=True)


class LearnedForecaster(BatchForecaster):
    """Gradient-boosted bin classifier over static features (see module doc).

    Learned attributes after `fit`: `classifier_` (the bin model: a regressor for
    kind="regression"), `residuals_` (its out-of-fold log2 errors; regression only),
    `temperature_`, `ideal_offset_` and `offset_errors_` (share -> mean absolute out-of-fold
    log2 error; regression only), `fail_model_` (None when
    training had one outcome only; then `fail_rate_` is used), `fail_rate_`, `medians_`,
    `n_threads` bounds the OpenMP threads of training and prediction.
    `ideal_offset` (dimensionless, >= 0, or "auto": chosen from `OFFSET_GRID` by out-of-fold
    error on the training problems; the share used is `ideal_offset_`) is the share of the
    roofline's ideal log2-speedup the regression target is taken relative to;
    `min_samples_leaf` bounds the rows of a leaf of the regressor (capped at
    max(20, rows / 20) so small training sets still split).
    `importances_` (mean |change of expected log2-speedup| when a feature is set to its
    median), `n_train_`, `train_problems_`, `hardware_keys_`.
    `reference_time` ("estimate" or "measured", see the module doc); `reference_ms_` maps
    (problem id, hardware key) to the recorded reference time in ms; `reference_use`
    ("feature", "everywhere" or "auto", see `measured_reference_matrix`) says which features a
    measured time enters, `reference_use_` the one used (with "auto": the one with the smaller
    mean absolute out-of-fold error on the training problems, `use_errors_`).
    """

    def __init__(self, name: str = "learned", max_iter: int = 100, learning_rate: float = 0.1,
                 max_leaf_nodes: int = 15, calibration_folds: int = 10, explain_top: int = 6,
                 n_threads: int = 1, seed: int = 0, kind: str = "regression",
                 calibration_objective: str = "match", ideal_offset: float | str = "auto",
                 min_samples_leaf: int = 100, reference_time: str = "measured",
                 reference_use: str = "auto"):
        if kind not in KINDS:
            raise ConfigError(f"kind is one of {', '.join(KINDS)}, got {kind!r}")
        if calibration_objective not in OBJECTIVES:
            raise ConfigError(f"calibration_objective is one of {', '.join(OBJECTIVES)}, "
                              f"got {calibration_objective!r}")
        if ideal_offset != "auto" and (isinstance(ideal_offset, str) or ideal_offset < 0) \
                or min_samples_leaf < 1:
            raise ConfigError(f"ideal_offset must be >= 0 or 'auto' and min_samples_leaf >= 1, "
                              f"got {ideal_offset!r} and {min_samples_leaf}")
        if reference_time not in REFERENCE_TIMES:
            raise ConfigError(f"reference_time is one of {', '.join(REFERENCE_TIMES)}, "
                              f"got {reference_time!r}")
        if reference_use not in REFERENCE_USES:
            raise ConfigError(f"reference_use is one of {', '.join(REFERENCE_USES)}, "
                              f"got {reference_use!r}")
        self.reference_time = reference_time
        self.reference_use = reference_use
        # fixed now, or (reference_use="auto") chosen by fit; None where no measured time enters
        self.reference_use_: str | None = (None if reference_use == "auto" or reference_time != "measured"
                                           else reference_use)
        self.use_errors_: dict[str, float] = {}
        self.reference_ms_: dict[tuple[str, str], float] = {}
        self.kind = kind
        self.ideal_offset = ideal_offset
        self.ideal_offset_ = None if ideal_offset == "auto" else float(ideal_offset)
        self.min_samples_leaf = min_samples_leaf
        self.calibration_objective = calibration_objective
        self.name = name
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.max_leaf_nodes = max_leaf_nodes
        self.calibration_folds = calibration_folds
        self.explain_top = explain_top
        self.n_threads = n_threads
        self.seed = seed
        self._explain_cache: OrderedDict[tuple, np.ndarray] = OrderedDict()

    # ------------------------------------------------------------------ reference times
    def _record_reference_times(self, measurements: Sequence[Measurement]) -> None:
        """Record each (problem, GPU)'s measured reference time in place (what `fit` learns):
        the median `reference_ms` of the given measurements that have one (finite, > 0),
        replacing a time the pair had."""
        times: dict[tuple[str, str], list[float]] = {}
        for m in measurements:
            if m.reference_ms is not None and math.isfinite(m.reference_ms) and m.reference_ms > 0:
                times.setdefault((m.problem_id, m.hardware_key), []).append(float(m.reference_ms))
        self.reference_ms_.update({k: float(np.median(v)) for k, v in times.items()})

    def _with_times(self, times: dict[tuple[str, str], float | None]) -> "LearnedForecaster":
        """A shallow copy whose recorded reference times are this one's with `times` applied
        ((problem id, hardware key) -> ms, or None to forget the pair's time); the fitted models
        are shared (read only), the explain memory is the copy's own."""
        for ms in times.values():
            if ms is not None and not (isinstance(ms, (int, float)) and math.isfinite(ms) and ms > 0):
                raise ConfigError(f"a reference time is a positive number of ms, got {ms!r}")
        new = copy.copy(self)
        new.reference_ms_ = dict(self.reference_ms_)
        new._explain_cache = OrderedDict()
        for key, ms in times.items():
            if ms is None:
                new.reference_ms_.pop(key, None)
            else:
                new.reference_ms_[key] = float(ms)
        return new

    def with_reference_times(self, measurements: Sequence[Measurement]) -> "LearnedForecaster":
        """A copy that knows each (problem, GPU)'s measured reference time: the median
        `reference_ms` of the given measurements that have one (replacing a time the pair had).
        Only read with reference_time="measured"; self is unchanged."""
        new = self._with_times({})
        new._record_reference_times(measurements)
        return new

    def for_run(self, problem: Problem, hardware: Hardware, evidence: RunEvidence) -> BatchForecaster:
        """The forecaster a search of `problem` on `hardware` uses (self is unchanged): a copy
        whose reference time for the pair is the run's (`evidence.reference_ms()`: the median of
        the run's measured reference times, before any the database's time when the run started,
        else none, so the pair reads the estimate whatever this forecaster had recorded for it),
        corrected by the run's correct kernels (`adapted`) when the evidence has any."""
        fc = self._with_times({(problem.id, hardware.key): evidence.reference_ms()})
        return fc.adapted(problem, hardware, evidence.kernels) if evidence.kernels else fc

    def _reference_times(self, rows: Sequence[tuple[Problem, Candidate, Hardware]]) -> np.ndarray:
        """(n,) the recorded reference time (ms) of each row's problem and GPU, NaN if none."""
        return np.asarray([self.reference_ms_.get((p.id, h.key), np.nan) for p, _, h in rows],
                          dtype=float)

    def _features(self, rows: Sequence[tuple[Problem, Candidate, Hardware]]) -> np.ndarray:
        """The feature matrix of (problem, candidate, hardware) rows; with
        reference_time="measured", the recorded reference time enters the features the fitted
        `reference_use_` names, where one is known (`measured_reference_matrix`)."""
        X = feature_matrix(rows)
        if self.reference_use_ is not None:  # set only with reference_time="measured"
            X = measured_reference_matrix(X, self._reference_times(rows), self.reference_use_)
        return X

    # ------------------------------------------------------------------ training
    def _new_classifier(self, max_iter: int | None = None) -> HistGradientBoostingClassifier:
        return HistGradientBoostingClassifier(
            max_iter=max_iter or self.max_iter, learning_rate=self.learning_rate,
            max_leaf_nodes=self.max_leaf_nodes, l2_regularization=1.0, min_samples_leaf=10,
            early_stopping=False, random_state=self.seed)

    def _new_regressor(self, n_rows: int) -> HistGradientBoostingRegressor:
        leaf = min(self.min_samples_leaf, max(20, n_rows // 20))
        return HistGradientBoostingRegressor(
            loss="absolute_error", max_iter=self.max_iter, learning_rate=self.learning_rate,
            max_leaf_nodes=self.max_leaf_nodes, l2_regularization=1.0, min_samples_leaf=leaf,
            early_stopping=False, random_state=self.seed)

    def _offset(self, X: np.ndarray) -> np.ndarray:
        """(n,) the part of log2-speedup the regressor does not learn: a share of the ideal."""
        return self.ideal_offset_ * X[:, _IDEAL]

    def _fit_median(self, X: np.ndarray, log2s: np.ndarray) -> HistGradientBoostingRegressor:
        return self._new_regressor(len(X)).fit(X, log2s - self._offset(X))

    def _median(self, model: HistGradientBoostingRegressor, X: np.ndarray) -> np.ndarray:
        return model.predict(X) + self._offset(X)

    def fit(self, problems: Sequence[Problem], candidates: Sequence[Candidate],
            measurements: Sequence[Measurement]) -> "LearnedForecaster":
        """Train on the measurements (ok ones for the bins, all for p_fail); returns self."""
        # OpenMP threads beyond the few cores a small model can use only fight each other
        # (on a busy 2-core machine, 100x slower); `n_threads` bounds them.
        with threadpool_limits(self.n_threads):
            return self._fit(problems, candidates, measurements)

    def _fit(self, problems, candidates, measurements) -> "LearnedForecaster":
        rows = training_rows(problems, candidates, measurements)
        if self.reference_time == "measured":
            self._record_reference_times([m for *_, m in rows])
        n_ok = sum(m.bin is not None for *_, m in rows)
        if n_ok < 10:
            raise ConfigError(f"the learned forecaster needs at least 10 ok measurements with a "
                              f"known problem and candidate to fit, got {n_ok}; measure more "
                              "candidates or load the shipped data (`workbench dataset load-shipped`)")
        X_all = feature_matrix([(p, c, h) for p, c, h, _ in rows])
        speedups = np.asarray([m.speedup if m.bin is not None else np.nan for *_, m in rows],
                              dtype=float)
        reference_ms = (self._reference_times([(p, c, h) for p, c, h, _ in rows])
                        if self.reference_time == "measured" else None)
        # already inside fit's thread limit: straight to the shared body of fit_matrix
        return self._fit_matrix(X_all, speedups, np.asarray([p.id for p, *_ in rows]),
                                [h.key for _, _, h, m in rows if m.bin is not None], reference_ms)

    def fit_matrix(self, X_all: np.ndarray, speedups: np.ndarray, groups_all: np.ndarray,
                   hardware_keys: Sequence[str] = (), reference_ms=None) -> "LearnedForecaster":
        """Train on a feature matrix (rows in `FEATURE_NAMES` columns) directly; returns self.

        `speedups` (n,): measured speedup of each row, NaN for a failed candidate (those train
        p_fail only); `groups_all` (n,): the problem id of each row (the calibration folds are
        grouped by it); `hardware_keys`: the GPUs of the ok rows (recorded, not learned from).
        With reference_time="measured" and `reference_ms` ((n,) each row's measured reference
        time in ms, NaN where unknown), X_all is the estimate-based matrix and the times enter
        it here as `reference_use` says ("auto": the use with the smaller out-of-fold error;
        `reference_use_`, `use_errors_`); a caller then forecasts rows X with
        `predict_proba(measured_reference_matrix(X, their_ms, fc.reference_use_))`. Without
        `reference_ms` the matrix is used as given."""
        with threadpool_limits(self.n_threads):
            return self._fit_matrix(X_all, np.asarray(speedups, float), np.asarray(groups_all),
                                    hardware_keys, reference_ms)

    def _fit_matrix(self, X_all, speedups, groups_all, hardware_keys,
                    reference_ms=None) -> "LearnedForecaster":
        is_ok = np.isfinite(speedups)
        if is_ok.sum() < 10:
            raise ConfigError(f"the learned forecaster needs at least 10 ok measurements to fit, "
                              f"got {int(is_ok.sum())}")
        groups = groups_all[is_ok]
        y = np.asarray([bins.bin_of(s) for s in speedups[is_ok]], dtype=int)
        log2s = np.log2(speedups[is_ok])
        X_all, chosen = self._choose_reference_use(X_all, reference_ms, is_ok, log2s, groups)
        X = X_all[is_ok]
        if self.kind == "regression":
            self.residuals_, self.temperature_ = self._fit_residuals(X, log2s, y, groups, chosen)
            self.classifier_ = self._fit_median(X, log2s)
        else:
            self.temperature_ = self._fit_temperature(X, y, groups)
            self.classifier_ = self._new_classifier().fit(X, y)
        failed = ~is_ok
        self.fail_rate_ = float((failed.sum() + 1) / (len(failed) + 2))
        self.fail_model_ = None
        if failed.sum() >= 5 and is_ok.sum() >= 5:
            self.fail_model_ = self._new_classifier(max_iter=100).fit(X_all, failed.astype(int))
        self.medians_ = np.median(X, axis=0)
        sample = X[np.random.default_rng(self.seed).permutation(len(X))[:200]]
        self.importances_ = np.abs(self._contributions(sample, np.arange(X.shape[1]))).mean(axis=0)
        self.n_train_ = int(is_ok.sum())
        self.train_problems_ = sorted(set(groups.tolist()))
        self.hardware_keys_ = sorted(set(hardware_keys))
        return self

    def _choose_reference_use(self, X_all, reference_ms, is_ok, log2s, groups):
        """(X_all with the measured reference times entered, the chosen use's out-of-fold
        medians or None). Sets `reference_use_` (None: no measured times enter, the matrix is
        used as given) and `use_errors_` (use -> the smallest mean absolute out-of-fold log2
        error over the ideal-offset shares; only where "auto" compared the uses)."""
        self.use_errors_ = {}
        if self.reference_time != "measured" or reference_ms is None:
            self.reference_use_ = None
            return X_all, None
        folds = min(self.calibration_folds, len(set(groups.tolist())))
        uses = (("feature", "everywhere") if self.reference_use == "auto"
                else (self.reference_use,))
        if len(uses) == 1 or self.kind != "regression" or folds < 2:
            self.reference_use_ = "feature" if self.reference_use == "auto" else self.reference_use
            return measured_reference_matrix(X_all, reference_ms, self.reference_use_), None
        best = None
        for use in uses:
            Xu = measured_reference_matrix(X_all, reference_ms, use)
            found = self._oof_medians(Xu[is_ok], log2s, groups, folds)
            self.use_errors_[use] = min(self.offset_errors_.values())
            if best is None or self.use_errors_[use] < best[0]:
                best = (self.use_errors_[use], use, Xu, found, self.ideal_offset_,
                        dict(self.offset_errors_))
        _, self.reference_use_, Xu, found, self.ideal_offset_, self.offset_errors_ = best
        return Xu, found

    def _fit_temperature(self, X: np.ndarray, y: np.ndarray, groups: np.ndarray) -> float:
        n_groups = len(set(groups.tolist()))
        folds = min(self.calibration_folds, n_groups)
        if folds < 2:
            self._keep_calibration(np.zeros((0, bins.N_BINS)), np.zeros(0))
            return 1.0
        oof = np.zeros((len(y), bins.N_BINS))
        for tr, te in GroupKFold(n_splits=folds).split(X, y, groups):
            model = self._new_classifier().fit(X[tr], y[tr])
            oof[te] = self._expand(model, model.predict_proba(X[te]))
        t = _temperature_for(oof, y, self.calibration_objective)
        self._keep_calibration(_sharpen(oof, t), y)
        return t

    def _keep_calibration(self, probs: np.ndarray, y: np.ndarray) -> None:
        self.calibration_probs_ = np.asarray(probs, dtype=np.float32)
        self.calibration_bins_ = np.asarray(y, dtype=np.int8)

    def calibration_set(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Out-of-fold forecasts of the training rows: ((n, 8) calibrated bin probabilities,
        (n,) measured bins), or None (fewer than 2 training problems, or a model saved before
        they were kept).

        Each row was forecast by a model that never saw its problem (folds grouped by problem),
        with the fitted temperature: a calibration split for a selective policy that exists
        before any candidate of a new problem is measured (what a search's `selective` and
        `uncertainty_aware` methods calibrate on)."""
        probs = getattr(self, "calibration_probs_", None)
        if probs is None or len(probs) == 0:
            return None
        return np.asarray(probs, dtype=float), np.asarray(self.calibration_bins_, dtype=int)

    def _oof_medians(self, X: np.ndarray, log2s: np.ndarray, groups: np.ndarray, folds: int
                     ) -> tuple[list, np.ndarray, np.ndarray]:
        """Problem-grouped folds, each row's fold index and its out-of-fold median log2-speedup.

        With ideal_offset="auto" every share in `OFFSET_GRID` gets its own out-of-fold medians
        and the one with the smallest mean absolute error is kept (sets `ideal_offset_` and
        `offset_errors_`)."""
        fold_of = np.zeros(len(log2s), dtype=int)
        splits = list(GroupKFold(n_splits=folds).split(X, log2s, groups))
        for k, (_, te) in enumerate(splits):
            fold_of[te] = k
        best, self.offset_errors_ = None, {}
        for share in (OFFSET_GRID if self.ideal_offset == "auto" else (self.ideal_offset_,)):
            self.ideal_offset_ = float(share)
            oof = np.zeros(len(log2s))
            for tr, te in splits:
                oof[te] = self._median(self._fit_median(X[tr], log2s[tr]), X[te])
            mae = float(np.mean(np.abs(log2s - oof)))
            self.offset_errors_[float(share)] = mae
            if best is None or mae < best[0]:
                best = (mae, float(share), oof)
        _, self.ideal_offset_, oof = best
        return splits, fold_of, oof

    def _fit_residuals(self, X: np.ndarray, log2s: np.ndarray, y: np.ndarray,
                       groups: np.ndarray, found=None) -> tuple[np.ndarray, float]:
        """Out-of-fold log2 residuals (folds grouped by problem) and the temperature.

        With ideal_offset="auto", each share in `OFFSET_GRID` gets its own out-of-fold medians
        and the one with the smallest mean absolute error is kept (`ideal_offset_`).
        The temperature is fitted on out-of-fold bin probabilities in which each fold's rows
        get the residuals of the *other* folds only (a row's own error never widens or
        narrows its own distribution), minimising `calibration_objective`. With fewer than 2
        problems: in-sample residuals, T = 1 (and "auto" takes 0.5). `found`: the result of
        `_oof_medians` on these rows when already computed (choosing the reference use)."""
        folds = min(self.calibration_folds, len(set(groups.tolist())))
        if folds < 2:
            if self.ideal_offset == "auto":
                self.ideal_offset_ = 0.5
            self.offset_errors_ = {}
            self._keep_calibration(np.zeros((0, bins.N_BINS)), np.zeros(0))
            res = log2s - self._median(self._fit_median(X, log2s), X)
            return res, 1.0
        splits, fold_of, oof = found or self._oof_medians(X, log2s, groups, folds)
        res = log2s - oof
        p = self._oof_probabilities(X, oof, res, splits, fold_of)
        t = _temperature_for(p, y, self.calibration_objective)
        self._keep_calibration(_sharpen(p, t), y)
        return res, t

    def _oof_probabilities(self, X: np.ndarray, oof: np.ndarray, res: np.ndarray, splits: list,
                           fold_of: np.ndarray) -> np.ndarray:
        """(n, 8) uncalibrated out-of-fold bin probabilities: each fold's rows get their
        out-of-fold medians `oof` plus the residuals `res` of the other folds."""
        p = np.zeros((len(oof), bins.N_BINS))
        for k, (_, te) in enumerate(splits):
            p[te] = residual_bin_probabilities(oof[te], res[fold_of != k])
        return p

    @staticmethod
    def _expand(model, proba: np.ndarray) -> np.ndarray:
        """Model probabilities over its seen classes -> all 8 bins, floored so none is 0."""
        out = np.full((len(proba), bins.N_BINS), 0.0)
        out[:, model.classes_.astype(int)] = proba
        out = 0.995 * out + 0.005 / bins.N_BINS
        return out / out.sum(axis=1, keepdims=True)

    # ------------------------------------------------------------------ prediction
    def _require_fitted(self) -> None:
        if not hasattr(self, "classifier_"):
            raise NotFittedError("LearnedForecaster is not fitted; call fit(problems, candidates, "
                                 "measurements) or LearnedForecaster.load(path)")

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """(n, 8) calibrated bin probabilities for a feature matrix."""
        self._require_fitted()
        if getattr(self, "kind", "classifier") == "regression":
            return self._proba_of_median(self.predict_median(X))
        with threadpool_limits(self.n_threads):
            raw = self.classifier_.predict_proba(X)
        return _sharpen(self._expand(self.classifier_, raw), self.temperature_)

    def _proba_of_median(self, medians: np.ndarray) -> np.ndarray:
        """(n, 8) calibrated bin probabilities of the regression's (n,) log2 medians."""
        return _sharpen(residual_bin_probabilities(medians, self.residuals_), self.temperature_)

    def _proba_shifted(self, X: np.ndarray, shift: np.ndarray | None) -> np.ndarray:
        """predict_proba, with the regression median moved by `shift` (log2) where given."""
        if shift is None or self.kind != "regression":
            return self.predict_proba(X)
        return self._proba_of_median(self.predict_median(X) + shift)

    def predict_median(self, X: np.ndarray) -> np.ndarray:
        """(n,) the regressor's median log2-speedup (kind="regression" only)."""
        self._require_fitted()
        if self.kind != "regression":
            raise ConfigError("predict_median needs kind='regression'")
        with threadpool_limits(self.n_threads):
            return self._median(self.classifier_, X)

    def predict_fail(self, X: np.ndarray) -> np.ndarray:
        """(n,) probability that each candidate fails (compile error, wrong output, ...)."""
        self._require_fitted()
        if self.fail_model_ is None:
            return np.full(len(X), self.fail_rate_)
        with threadpool_limits(self.n_threads):
            return self.fail_model_.predict_proba(X)[:, 1]

    def _contributions(self, X: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """(n, len(cols)): expected log2-speedup minus that with feature col set to its median."""
        base = self.predict_proba(X) @ _MID
        Xr = np.repeat(X, len(cols), axis=0)
        idx = np.tile(cols, len(X))
        Xr[np.arange(len(Xr)), idx] = self.medians_[idx]
        alt = (self.predict_proba(Xr) @ _MID).reshape(len(X), len(cols))
        return base[:, None] - alt

    def _words(self, x: np.ndarray, contrib: np.ndarray, cols: np.ndarray, k: int = 2) -> str:
        order = np.argsort(-np.abs(contrib))[:k]
        parts = [f"{FEATURE_NAMES[cols[i]]}={x[cols[i]]:.3g} ({contrib[i]:+.2f} octaves)"
                 for i in order if abs(contrib[i]) > 1e-6]
        return ", ".join(parts) if parts else "no single feature stands out"

    def _top_cols(self) -> np.ndarray:
        return np.argsort(-self.importances_)[: self.explain_top]

    def forecast_batch(self, items: Sequence[tuple[Problem, Candidate]], hardware: Hardware,
                       relative_to: str = "reference",
                       parents: Sequence[Candidate | None] | None = None) -> list[Forecast]:
        """Forecasts for many candidates in one model call per step; order is kept."""
        return self._forecast_batch(items, hardware, relative_to, parents, None)

    # ------------------------------------------------------------------ problem evidence
    def evidence_correction(self, X_evidence: np.ndarray, log2_evidence: np.ndarray, X: np.ndarray,
                            bandwidth: float = 1.0, prior: float = 1.0) -> np.ndarray:
        """(n,) log2 correction of the median for rows `X` of one problem on one GPU, from measured
        rows of that problem and GPU (`X_evidence`, their measured log2-speedups `log2_evidence`).

        The model's errors on a problem are correlated: kernels of one problem that look alike
        miss by similar amounts. The correction is a kernel-weighted mean of the evidence's
        errors r_j = log2_evidence_j - median_j, weight exp(-d2 / bandwidth) with d2 the mean
        squared difference of the features that vary among the evidence rows, each scaled by its
        spread there; `prior` is the weight of the evidence's mean error (so a row far from every
        evidence row gets that mean: the problem's offset). One evidence row: its error."""
        if bandwidth <= 0 or prior <= 0:
            raise ConfigError(f"bandwidth and prior must be positive, got {bandwidth} and {prior}")
        X_evidence, X = np.atleast_2d(np.asarray(X_evidence, float)), np.atleast_2d(np.asarray(X, float))
        r = np.asarray(log2_evidence, float) - self.predict_median(X_evidence)
        if len(r) == 0:
            return np.zeros(len(X))
        sd = X_evidence.std(axis=0)
        keep = sd > 1e-9
        if not keep.any():
            return np.full(len(X), float(r.mean()))
        A, B = X_evidence[:, keep] / sd[keep], X[:, keep] / sd[keep]
        d2 = ((B[:, None, :] - A[None, :, :]) ** 2).mean(axis=2)
        w = np.exp(-d2 / bandwidth)
        return (w @ r + prior * float(r.mean())) / (w.sum(axis=1) + prior)

    def adapted(self, problem: Problem, hardware: Hardware,
                evidence: Sequence[tuple[Candidate, float]], bandwidth: float = 1.0,
                prior: float = 1.0) -> "AdaptedForecaster":
        """This forecaster corrected by measured kernels of `problem` on `hardware`.

        `evidence`: (candidate, measured speedup over the reference) pairs, speedups > 0.
        Forecasts of that problem on that GPU get `evidence_correction` added to the median
        (kind="regression"; a classifier is returned unchanged in effect); other problems and
        GPUs are forecast as before. What a search uses once it has measured some children."""
        self._require_fitted()
        ev = [(c, float(s)) for c, s in evidence if s is not None and s > 0 and math.isfinite(s)]
        if any(c.problem_id != problem.id for c, _ in ev):
            raise ConfigError(f"evidence for {problem.id} must be candidates of that problem")
        return AdaptedForecaster(self, problem, hardware, ev, bandwidth, prior)

    def _forecast_batch(self, items: Sequence[tuple[Problem, Candidate]], hardware: Hardware,
                        relative_to: str, parents: Sequence[Candidate | None] | None,
                        adapted: "AdaptedForecaster | None") -> list[Forecast]:
        self._require_fitted()
        if relative_to not in ("reference", "parent"):
            raise ValueError(f"relative_to is 'reference' or 'parent', got {relative_to!r}")
        if not items:
            return []
        parents = list(parents) if parents is not None else [None] * len(items)
        X = self._features([(p, c, hardware) for p, c in items])
        shift = adapted.shift([p for p, _ in items], hardware, X) if adapted is not None else None
        medians = None
        if self.kind == "regression":  # one model call gives the medians and the probabilities
            medians = self.predict_median(X)
            if shift is not None:
                medians = medians + shift
            probs = self._proba_of_median(medians)
        else:
            probs = self.predict_proba(X)
        p_fail = self.predict_fail(X)
        cols = self._top_cols()
        contrib = self._contributions(X, cols)
        for (p, c), x in zip(items, X):
            self._remember((c.id, hardware.key), x)
        parent_probs: dict[int, np.ndarray] = {}
        if relative_to == "parent":
            idx = [i for i, par in enumerate(parents) if par is not None]
            if idx:
                Xp = self._features([(items[i][0], parents[i], hardware) for i in idx])
                pshift = (adapted.shift([items[i][0] for i in idx], hardware, Xp)
                          if adapted is not None else None)
                for i, row in zip(idx, self._proba_shifted(Xp, pshift)):
                    parent_probs[i] = row
        out = []
        for i, (p, c) in enumerate(items):
            common = dict(forecaster=self.name, candidate_id=c.id, problem_id=p.id,
                          hardware_key=hardware.key, relative_to=relative_to)
            words = self._words(X[i], contrib[i], cols)
            if relative_to == "parent":
                if i not in parent_probs:
                    out.append(Forecast.abstention(reason="a parent-relative forecast needs the "
                                                   "parent", **common))
                    continue
                dist = relative_distribution(probs[i], parent_probs[i])
                lead = (f"Child ~{2 ** float(probs[i] @ _MID):.2g}x and parent "
                        f"~{2 ** float(parent_probs[i] @ _MID):.2g}x over the reference")
            else:
                dist = probs[i]
                lead = f"Boosted trees expect ~{2 ** float(dist @ _MID):.2g}x"
                if self.kind == "regression":
                    lead += f" (median ~{2 ** float(medians[i]):.2g}x)"
            if shift is not None and shift[i] != 0.0:
                lead += (f"; {len(adapted.evidence)} measured kernel(s) of this problem move the "
                         f"median by {float(shift[i]):+.2f} octaves")
            dist, tempered = temper_unknown_counts(p, dist)
            if tempered:
                lead += "; the problem's FLOPs and bytes are unknown, so no extreme bin is trusted"
            out.append(Forecast(probabilities=dist,
                                reasoning=f"{lead}; strongest features: {words}.",
                                p_fail=float(p_fail[i]), **common))
        return out

    def _remember(self, key: tuple, x: np.ndarray) -> None:
        self._explain_cache[key] = x
        self._explain_cache.move_to_end(key)
        while len(self._explain_cache) > 10_000:
            self._explain_cache.popitem(last=False)

    def explain(self, forecast: Forecast, k: int = 3) -> str:
        """Words naming the features that moved this forecast most (vs. the training medians).

        Works for forecasts this instance made (their features are remembered)."""
        self._require_fitted()
        x = self._explain_cache.get((forecast.candidate_id, forecast.hardware_key))
        if x is None:
            raise WorkbenchError(f"no features remembered for candidate {forecast.candidate_id} "
                                 f"on {forecast.hardware_key}; forecast it with this forecaster "
                                 "first, then call explain")
        cols = self._top_cols()
        contrib = self._contributions(x[None, :], cols)[0]
        return (f"Expected log2-speedup {float(self.predict_proba(x[None, :])[0] @ _MID):+.2f}; "
                f"moved most by {self._words(x, contrib, cols, k)}.")

    # ------------------------------------------------------------------ persistence
    def __getstate__(self):
        state = dict(self.__dict__)
        state["_explain_cache"] = OrderedDict()
        return state

    def __setstate__(self, state):
        # A model saved before reference times existed used the estimate and recorded none.
        state.setdefault("reference_time", "estimate")
        state.setdefault("reference_ms_", {})
        # ...and one saved before reference uses existed put a measured time in ref_log10_us only.
        use = "feature" if state["reference_time"] == "measured" else None
        state.setdefault("reference_use", use or "auto")
        state.setdefault("reference_use_", use)
        state.setdefault("use_errors_", {})
        self.__dict__.update(state)

    def save(self, path: str | Path) -> Path:
        """Write the fitted forecaster to `path` (joblib)."""
        self._require_fitted()
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        joblib.dump({"format": _FORMAT, "features": FEATURE_NAMES, "model": self}, path)
        return path

    @classmethod
    def load(cls, path: str | Path) -> "LearnedForecaster":
        """Read a forecaster written by `save`; refuses files from another feature set."""
        try:
            blob = joblib.load(Path(path))
        except Exception as e:  # noqa: BLE001 - any unreadable file gets the same clear error
            raise ConfigError(f"{path}: cannot read a saved learned forecaster ({e})") from e
        if not isinstance(blob, dict) or blob.get("format") != _FORMAT:
            raise ConfigError(f"{path}: not a learned forecaster saved by this workbench version")
        if tuple(blob["features"]) != FEATURE_NAMES:
            raise ConfigError(f"{path}: saved with a different feature set; re-fit it "
                              "(`workbench evaluate` or LearnedForecaster().fit(...))")
        return blob["model"]


class AdaptedForecaster(BatchForecaster):
    """A fitted `LearnedForecaster` corrected by measured kernels of one problem on one GPU
    (`LearnedForecaster.adapted`). Same name as the base: its forecasts are the base's
    forecasts with the problem's evidence folded in, and their reasoning says by how much."""

    def __init__(self, base: LearnedForecaster, problem: Problem, hardware: Hardware,
                 evidence: list[tuple[Candidate, float]], bandwidth: float, prior: float):
        self.base, self.problem, self.hardware = base, problem, hardware
        self.evidence, self.bandwidth, self.prior = evidence, bandwidth, prior
        self.name = base.name
        self._X = (base._features([(problem, c, hardware) for c, _ in evidence])
                   if evidence else np.zeros((0, len(FEATURE_NAMES))))
        self._log2 = np.log2([s for _, s in evidence]) if evidence else np.zeros(0)

    def shift(self, problems: Sequence[Problem], hardware: Hardware, X: np.ndarray) -> np.ndarray | None:
        """(n,) the correction for rows X (0 for rows of another problem or GPU), or None."""
        if not self.evidence or hardware.key != self.hardware.key or self.base.kind != "regression":
            return None
        mine = np.array([p.id == self.problem.id for p in problems])
        if not mine.any():
            return None
        out = np.zeros(len(X))
        out[mine] = self.base.evidence_correction(self._X, self._log2, X[mine], self.bandwidth,
                                                  self.prior)
        return out

    def forecast_batch(self, items: Sequence[tuple[Problem, Candidate]], hardware: Hardware,
                       relative_to: str = "reference",
                       parents: Sequence[Candidate | None] | None = None) -> list[Forecast]:
        return self.base._forecast_batch(items, hardware, relative_to, parents, self)

    def calibration_set(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The base forecaster's out-of-fold calibration set (not re-fitted on the evidence)."""
        return self.base.calibration_set()
