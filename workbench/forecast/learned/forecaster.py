"""The learned forecaster: a median regressor, a residual distribution, a chosen variant.

`LearnedForecaster().fit(problems, candidates, measurements)` trains on the ok measurements, in
the order scikit-learn / MAPIE users know (fit, calibrate, predict):

1. `select_variant` (`workbench.forecast.learned.selection`) chooses, by mean absolute
   out-of-fold log2 error over problem-grouped folds of the training rows, the share of the
   roofline's ideal log2-speedup the median is taken relative to (`ideal_offset="auto"`: one of
   `OFFSET_GRID`) and, with measured reference times, which features they enter
   (`reference_use="auto"`); the returned `VariantChoice` is kept as `variant_` and says what
   was chosen and why (`variant_.reason()`).
2. A `MedianRegressor` (`median_`, `workbench.forecast.learned.median`) is fitted on all
   training rows with the chosen variant.
3. A `ResidualDistribution` (`distribution_`, `workbench.forecast.learned.distribution`) is
   calibrated on the chosen variant's out-of-fold medians: a median becomes bin probabilities
   through the out-of-fold residuals and a fitted temperature; the training rows' out-of-fold
   calibrated probabilities are kept (`calibration_set`).

A second classifier gives p_fail (compile error, wrong output, crash, ...) from all measurements.

Features come from `workbench.forecast.features` and never name the problem, so the model
forecasts unseen problems. With `reference_time="measured"` the feature holding the reference's
time (`ref_log10_us`, by default the reference profile's roofline estimate) takes the reference's
*measured* eager time on that GPU wherever one is known (the median `reference_ms` of a
problem's measurements there: `fit` records the training measurements'; `with_reference_times`
returns a copy that knows more, e.g. the held-out problems' in `workbench.evaluate.crossval`;
`for_run` one that knows a search run's); elsewhere the estimate stays. With
`reference_use="everywhere"` the measured time also replaces the estimate in the features
computed from it (`measured_reference_matrix`). Times in the features are relative to each
GPU's own roofline, so a model trained on one GPU reads another's rows on the same scale.
Parent-relative forecasts combine the candidate's and the parent's reference-relative
distributions (`relative_distribution`). `save`/`load` use joblib.
"""
from __future__ import annotations

import copy
import math
from collections import OrderedDict
from pathlib import Path
from typing import Sequence

import joblib
import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from threadpoolctl import threadpool_limits

from workbench import bins
from workbench.errors import ConfigError, NotFittedError, WorkbenchError
from workbench.forecast.base import BatchForecaster, temper_unknown_counts
from workbench.forecast.features import FEATURE_NAMES, feature_matrix
from workbench.forecast.learned.adapted import AdaptedForecaster
from workbench.forecast.learned.distribution import MID, ResidualDistribution, relative_distribution
from workbench.forecast.learned.median import OFFSET_GRID, MedianRegressor
from workbench.forecast.learned.reference import (REFERENCE_TIMES, REFERENCE_USES,
                                                  measured_reference_matrix)
from workbench.forecast.learned.selection import USES, VariantChoice, select_variant
from workbench.records import Candidate, Forecast, Hardware, Measurement, Problem, RunEvidence

#: Stored in every saved forecaster; a file with another format is refused with a refit message.
FORMAT = "workbench.learned/5"


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


class LearnedForecaster(BatchForecaster):
    """Median regressor + residual distribution over static features (see module doc).

    Settings: `max_iter`, `learning_rate`, `max_leaf_nodes`, `min_samples_leaf` (rows of a leaf,
    capped at max(20, rows / 20)) and `seed` of the trees (`MedianRegressor`); `ideal_offset`
    (dimensionless, >= 0, or "auto": chosen from `OFFSET_GRID`); `calibration_folds` (the most
    problem-grouped folds of variant selection and calibration); `reference_time` ("estimate"
    or "measured") and `reference_use` ("feature", "everywhere" or "auto", see
    `measured_reference_matrix`); `n_threads` bounds the OpenMP threads of training and
    prediction; `explain_top` the features a forecast's reasoning names.

    Learned attributes after `fit`: `variant_` (the `VariantChoice`), `median_`
    (`MedianRegressor`), `distribution_` (`ResidualDistribution`), `fail_model_` (None when
    training had one outcome only; then `fail_rate_` is used), `fail_rate_`, `medians_`,
    `importances_` (mean |change of expected log2-speedup| when a feature is set to its
    median), `n_train_`, `train_problems_`, `hardware_keys_`, `reference_ms_` ((problem id,
    hardware key) -> the recorded reference time in ms). Read-only views of the records:
    `ideal_offset_`, `offset_errors_`, `reference_use_` (None where no measured time enters),
    `use_errors_`, `residuals_`, `temperature_`.
    """

    #: Forecasts carry a median (research subclasses without one set this False).
    has_median = True

    def __init__(self, name: str = "learned", max_iter: int = 100, learning_rate: float = 0.1,
                 max_leaf_nodes: int = 15, calibration_folds: int = 10, explain_top: int = 6,
                 n_threads: int = 1, seed: int = 0, ideal_offset: float | str = "auto",
                 min_samples_leaf: int = 100, reference_time: str = "measured",
                 reference_use: str = "auto"):
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
        self.reference_ms_: dict[tuple[str, str], float] = {}
        self.ideal_offset = ideal_offset
        self.min_samples_leaf = min_samples_leaf
        self.name = name
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.max_leaf_nodes = max_leaf_nodes
        self.calibration_folds = calibration_folds
        self.explain_top = explain_top
        self.n_threads = n_threads
        self.seed = seed
        self._explain_cache: OrderedDict[tuple, np.ndarray] = OrderedDict()

    # ------------------------------------------------------------------ the fitted records
    @property
    def ideal_offset_(self) -> float | None:
        """The share used: the fitted variant's, before `fit` the fixed setting (None: "auto")."""
        if "variant_" not in self.__dict__:
            return None if self.ideal_offset == "auto" else float(self.ideal_offset)
        return self.variant_.ideal_offset

    @property
    def offset_errors_(self) -> dict[float, float]:
        return self.variant_.offset_errors

    @property
    def reference_use_(self) -> str | None:
        """The use of measured reference times: the fitted variant's, before `fit` the fixed
        setting (None: "auto", or reference_time="estimate")."""
        if "variant_" not in self.__dict__:
            fixed = self.reference_use != "auto" and self.reference_time == "measured"
            return self.reference_use if fixed else None
        return self.variant_.reference_use

    @property
    def use_errors_(self) -> dict[str, float]:
        return self.variant_.use_errors

    @property
    def residuals_(self) -> np.ndarray:
        return self.distribution_.residuals_

    @property
    def temperature_(self) -> float:
        return self.distribution_.temperature_

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

    def _new_median(self, ideal_offset: float) -> MedianRegressor:
        """An unfitted median regressor with this forecaster's settings."""
        return MedianRegressor(ideal_offset, max_iter=self.max_iter, learning_rate=self.learning_rate,
                               max_leaf_nodes=self.max_leaf_nodes,
                               min_samples_leaf=self.min_samples_leaf, seed=self.seed)

    def _new_distribution(self) -> ResidualDistribution:
        """An uncalibrated residual distribution."""
        return ResidualDistribution()

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
        p_fail only); `groups_all` (n,): the problem id of each row (the folds are grouped by
        it); `hardware_keys`: the GPUs of the ok rows (recorded, not learned from).
        With reference_time="measured" and `reference_ms` ((n,) each row's measured reference
        time in ms, NaN where unknown), X_all is the estimate-based matrix and the times enter
        it here as the chosen variant says (`reference_use_`); a caller then forecasts rows X
        with `predict_proba(measured_reference_matrix(X, their_ms, fc.reference_use_))`.
        Without `reference_ms` the matrix is used as given."""
        with threadpool_limits(self.n_threads):
            return self._fit_matrix(X_all, np.asarray(speedups, float), np.asarray(groups_all),
                                    hardware_keys, reference_ms)

    def select_variant(self, X: np.ndarray, log2s: np.ndarray, groups: np.ndarray,
                       reference_ms=None) -> VariantChoice:
        """`select_variant` over this forecaster's settings: the shares `OFFSET_GRID` (or the
        fixed `ideal_offset`) and the reference uses "feature" and "everywhere" (or the fixed
        `reference_use`; none without `reference_ms`), on ok rows X (estimate-based), their
        log2-speedups and problem ids."""
        offsets = OFFSET_GRID if self.ideal_offset == "auto" else (self.ideal_offset,)
        uses = USES if self.reference_use == "auto" else (self.reference_use,)
        return select_variant(X, log2s, groups, reference_ms, offsets=offsets, uses=uses,
                              folds=self.calibration_folds, new_median=self._new_median)

    def _fit_matrix(self, X_all, speedups, groups_all, hardware_keys,
                    reference_ms=None) -> "LearnedForecaster":
        is_ok = np.isfinite(speedups)
        if is_ok.sum() < 10:
            raise ConfigError(f"the learned forecaster needs at least 10 ok measurements to fit, "
                              f"got {int(is_ok.sum())}")
        groups = groups_all[is_ok]
        y = np.asarray([bins.bin_of(s) for s in speedups[is_ok]], dtype=int)
        log2s = np.log2(speedups[is_ok])
        if self.reference_time != "measured":
            reference_ms = None
        ref_ok = None if reference_ms is None else np.asarray(reference_ms, dtype=float)[is_ok]
        self.variant_ = self.select_variant(X_all[is_ok], log2s, groups, ref_ok)
        if self.variant_.reference_use is not None:
            X_all = measured_reference_matrix(X_all, reference_ms, self.variant_.reference_use)
        X = X_all[is_ok]
        self._fit_bins(X, log2s, y, groups)
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

    def _fit_bins(self, X: np.ndarray, log2s: np.ndarray, y: np.ndarray, groups: np.ndarray) -> None:
        """Fit the bin model on the ok rows X (features as the chosen variant enters them):
        `median_` on every row, `distribution_` on the chosen variant's out-of-fold medians
        (in-sample residuals where there were fewer than 2 folds)."""
        self.median_ = self._new_median(self.variant_.ideal_offset).fit(X, log2s)
        self.distribution_ = self._calibrate(self._new_distribution(), X, log2s, y, groups)

    def _calibrate(self, distribution: ResidualDistribution, X: np.ndarray, log2s: np.ndarray,
                   y: np.ndarray, groups: np.ndarray) -> ResidualDistribution:
        """`distribution` calibrated on the chosen variant's out-of-fold medians."""
        choice = self.variant_
        if choice.folds < 2:
            return distribution.fit_in_sample(log2s - self.median_.predict(X))
        return distribution.calibrate(choice.oof_medians, log2s, y, choice.splits, X)

    def calibration_set(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Out-of-fold forecasts of the training rows: ((n, 8) calibrated bin probabilities,
        (n,) measured bins), or None (fewer than 2 training problems).

        Each row was forecast by a model that never saw its problem (folds grouped by problem),
        with the fitted temperature: a calibration split for a selective policy that exists
        before any candidate of a new problem is measured (what a search's `selective` and
        `uncertainty_aware` methods calibrate on)."""
        dist = getattr(self, "distribution_", None)
        return None if dist is None else dist.calibration_set()

    # ------------------------------------------------------------------ prediction
    def _require_fitted(self) -> None:
        if not hasattr(self, "variant_"):
            raise NotFittedError("LearnedForecaster is not fitted; call fit(problems, candidates, "
                                 "measurements) or LearnedForecaster.load(path)")

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """(n, 8) calibrated bin probabilities for a feature matrix."""
        self._require_fitted()
        return self._proba_of_median(self.predict_median(X), X)

    def _proba_of_median(self, medians: np.ndarray, X: np.ndarray) -> np.ndarray:
        """(n, 8) calibrated bin probabilities of the (n,) log2 medians of rows X."""
        return self.distribution_.predict_proba(medians, X)

    def _proba_shifted(self, X: np.ndarray, shift: np.ndarray | None) -> np.ndarray:
        """predict_proba, with the median moved by `shift` (log2) where given."""
        if shift is None or not self.has_median:
            return self.predict_proba(X)
        return self._proba_of_median(self.predict_median(X) + shift, X)

    def predict_median(self, X: np.ndarray) -> np.ndarray:
        """(n,) the median log2-speedup of rows X."""
        self._require_fitted()
        with threadpool_limits(self.n_threads):
            return self.median_.predict(X)

    def predict_fail(self, X: np.ndarray) -> np.ndarray:
        """(n,) probability that each candidate fails (compile error, wrong output, ...)."""
        self._require_fitted()
        if self.fail_model_ is None:
            return np.full(len(X), self.fail_rate_)
        with threadpool_limits(self.n_threads):
            return self.fail_model_.predict_proba(X)[:, 1]

    def _contributions(self, X: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """(n, len(cols)): expected log2-speedup minus that with feature col set to its median."""
        base = self.predict_proba(X) @ MID
        Xr = np.repeat(X, len(cols), axis=0)
        idx = np.tile(cols, len(X))
        Xr[np.arange(len(Xr)), idx] = self.medians_[idx]
        alt = (self.predict_proba(Xr) @ MID).reshape(len(X), len(cols))
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
        (where the forecaster has a median); other problems and
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
        if self.has_median:  # one model call gives the medians and the probabilities
            medians = self.predict_median(X)
            if shift is not None:
                medians = medians + shift
            probs = self._proba_of_median(medians, X)
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
                lead = (f"Child ~{2 ** float(probs[i] @ MID):.2g}x and parent "
                        f"~{2 ** float(parent_probs[i] @ MID):.2g}x over the reference")
            else:
                dist = probs[i]
                lead = f"Boosted trees expect ~{2 ** float(dist @ MID):.2g}x"
                if self.has_median:
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
        return (f"Expected log2-speedup {float(self.predict_proba(x[None, :])[0] @ MID):+.2f}; "
                f"moved most by {self._words(x, contrib, cols, k)}.")

    # ------------------------------------------------------------------ persistence
    def __getstate__(self):
        state = dict(self.__dict__)
        state["_explain_cache"] = OrderedDict()
        return state

    def save(self, path: str | Path) -> Path:
        """Write the fitted forecaster to `path` (joblib)."""
        self._require_fitted()
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        joblib.dump({"format": FORMAT, "features": FEATURE_NAMES, "model": self}, path)
        return path

    @classmethod
    def load(cls, path: str | Path) -> "LearnedForecaster":
        """Read a forecaster written by `save`; refuses files from another feature set."""
        try:
            blob = joblib.load(Path(path))
        except Exception as e:  # noqa: BLE001 - any unreadable file gets the same clear error
            raise ConfigError(f"{path}: cannot read a saved learned forecaster ({e})") from e
        if not isinstance(blob, dict) or not str(blob.get("format", "")).startswith("workbench.learned/"):
            raise ConfigError(f"{path}: not a learned forecaster saved by this workbench")
        if blob["format"] != FORMAT:
            raise ConfigError(f"{path}: a learned forecaster saved by another workbench version "
                              f"({blob['format']}, this one reads {FORMAT}); re-fit it "
                              "(`workbench evaluate` or LearnedForecaster().fit(...)) and save again")
        if tuple(blob["features"]) != FEATURE_NAMES:
            raise ConfigError(f"{path}: saved with a different feature set; re-fit it "
                              "(`workbench evaluate` or LearnedForecaster().fit(...))")
        return blob["model"]
