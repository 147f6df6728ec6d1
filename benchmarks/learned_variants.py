"""Research-only variants of the learned forecaster (used by forecast_variants.py and
forecast_bench.py; the app and the CLI use `workbench.forecast.learned.LearnedForecaster`).

- `ResearchForecaster`: the forecaster with the option `calibration_objective` (the residual
  distribution's temperature objective, one of `OBJECTIVES`; the shipped one uses "match");
- `BinClassifier`: a gradient-boosted classifier over the 8 bins with a temperature fitted on
  problem-grouped out-of-fold probabilities, instead of a median and residuals (no median);
- `Ensemble`, `LocalResiduals`, `ScaledResiduals`, `OpsNeighbourOffset`: the variants of
  forecast_variants.py (see its module doc), built from other median regressors, residual
  distributions or calibration steps.
"""
from __future__ import annotations


import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.model_selection import GroupKFold

from workbench import bins
from workbench.errors import ConfigError
from workbench.forecast import learned as L
from workbench.forecast.learned.distribution import LOG2_EDGES, OBJECTIVES, sharpen, temperature_for
from workbench.forecast.learned.selection import VariantChoice


class ResearchForecaster(L.LearnedForecaster):
    """`LearnedForecaster` with `calibration_objective` ("match", "nll", "brier" or "ece")."""

    def __init__(self, calibration_objective: str = "match", **kwargs):
        if calibration_objective not in OBJECTIVES:
            raise ConfigError(f"calibration_objective is one of {', '.join(OBJECTIVES)}, "
                              f"got {calibration_objective!r}")
        super().__init__(**kwargs)
        self.calibration_objective = calibration_objective

    def _new_distribution(self) -> L.ResidualDistribution:
        return L.ResidualDistribution(self.calibration_objective)


def _expand(model, proba: np.ndarray) -> np.ndarray:
    """Model probabilities over its seen classes -> all 8 bins, floored so none is 0."""
    out = np.full((len(proba), bins.N_BINS), 0.0)
    out[:, model.classes_.astype(int)] = proba
    out = 0.995 * out + 0.005 / bins.N_BINS
    return out / out.sum(axis=1, keepdims=True)


class BinClassifier(ResearchForecaster):
    """A gradient-boosted bin classifier with a temperature fitted on out-of-fold probabilities
    (folds grouped by problem); no median, no variant selection (the shares of the roofline do
    not apply; a measured reference time enters `ref_log10_us`, or as `reference_use` fixes)."""

    has_median = False
    kind = "classifier"

    def select_variant(self, X, log2s, groups, reference_ms=None) -> VariantChoice:
        use = None if reference_ms is None else (
            "feature" if self.reference_use == "auto" else self.reference_use)
        return VariantChoice(None if self.ideal_offset == "auto" else float(self.ideal_offset), use)

    def _fit_bins(self, X, log2s, y, groups) -> None:
        folds = min(self.calibration_folds, len(set(groups.tolist())))
        self.bin_temperature_ = 1.0
        self.bin_calibration_ = (np.zeros((0, bins.N_BINS)), np.zeros(0, dtype=int))
        if folds >= 2:
            oof = np.zeros((len(y), bins.N_BINS))
            for tr, te in GroupKFold(n_splits=folds).split(X, y, groups):
                model = self._new_classifier().fit(X[tr], y[tr])
                oof[te] = _expand(model, model.predict_proba(X[te]))
            self.bin_temperature_ = temperature_for(oof, y, self.calibration_objective)
            self.bin_calibration_ = (np.asarray(sharpen(oof, self.bin_temperature_), dtype=np.float32),
                                     np.asarray(y, dtype=np.int8))
        self.classifier_ = self._new_classifier().fit(X, y)

    @property
    def temperature_(self) -> float:
        return self.bin_temperature_

    def calibration_set(self):
        probs, y = getattr(self, "bin_calibration_", (None, None))
        if probs is None or len(probs) == 0:
            return None
        return np.asarray(probs, dtype=float), np.asarray(y, dtype=int)

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        self._require_fitted()
        from threadpoolctl import threadpool_limits

        with threadpool_limits(self.n_threads):
            raw = self.classifier_.predict_proba(X)
        return sharpen(_expand(self.classifier_, raw), self.bin_temperature_)

    def predict_median(self, X: np.ndarray) -> np.ndarray:
        raise ConfigError("a bin classifier has no median; use predict_proba")


class _Mean:
    """A regressor whose prediction is the mean of several fitted ones."""

    def __init__(self, models):
        self.models = models

    def predict(self, X):
        return np.mean([m.predict(X) for m in self.models], axis=0)


class EnsembleMedian(L.MedianRegressor):
    """The median is the mean of `members` regressors, each with max_features=0.5."""

    members = 5

    def fit(self, X, log2s):
        target = log2s - self.offset(X)
        models = []
        for k in range(self.members):
            m = self.new_model(len(X))
            m.set_params(max_features=0.5, random_state=k)
            models.append(m.fit(X, target))
        self.model_ = _Mean(models)
        return self


class Ensemble(ResearchForecaster):
    """The median is the mean of 5 regressors, each drawing half the features per split."""

    def _new_median(self, ideal_offset: float) -> L.MedianRegressor:
        return EnsembleMedian(ideal_offset, max_iter=self.max_iter, learning_rate=self.learning_rate,
                              max_leaf_nodes=self.max_leaf_nodes,
                              min_samples_leaf=self.min_samples_leaf, seed=self.seed)


def weighted_bin_probabilities(median, centres, residuals, width=1.0, floor=0.002):
    """Bin probabilities of median_i + r_j with r_j weighted by exp(-(median_i - centre_j)^2 / 2w^2)."""
    median = np.asarray(median, float)
    v = median[:, None] + residuals[None, :]
    b = np.searchsorted(LOG2_EDGES, v, side="left")
    w = np.exp(-0.5 * ((median[:, None] - centres[None, :]) / width) ** 2) + 1e-12
    w /= w.sum(axis=1, keepdims=True)
    p = np.stack([(w * (b == k)).sum(axis=1) for k in range(bins.N_BINS)], axis=1)
    p = np.maximum(p, floor)
    return p / p.sum(axis=1, keepdims=True)


class LocalResidualDistribution(L.ResidualDistribution):
    """Residuals weighted by the closeness of their out-of-fold median to the row's median."""

    def oof_probabilities(self, oof, res, splits, fold_of, X=None):
        self.centres_ = oof
        p = np.zeros((len(oof), bins.N_BINS))
        for k, (_, te) in enumerate(splits):
            o = fold_of != k
            p[te] = weighted_bin_probabilities(oof[te], oof[o], res[o])
        return p

    def predict_proba(self, medians, X=None):
        return sharpen(weighted_bin_probabilities(medians, self.centres_, self.residuals_),
                       self.temperature_)


class LocalResiduals(ResearchForecaster):
    """`LocalResidualDistribution` instead of pooled residuals."""

    def _new_distribution(self):
        return LocalResidualDistribution(self.calibration_objective)


def scaled_bin_probabilities(median, spread, z, floor=0.002):
    """Bin probabilities of median_i + spread_i * z_j."""
    v = np.asarray(median, float)[:, None] + np.asarray(spread, float)[:, None] * z[None, :]
    b = np.searchsorted(LOG2_EDGES, v, side="left")
    p = np.stack([(b == k).mean(axis=1) for k in range(bins.N_BINS)], axis=1)
    p = np.maximum(p, floor)
    return p / p.sum(axis=1, keepdims=True)


class ScaledResidualDistribution(L.ResidualDistribution):
    """A per-row spread from a regressor of |residual|; residuals standardised by it."""

    min_spread = 0.15

    def __init__(self, objective: str = "match", seed: int = 0):
        super().__init__(objective)
        self.seed = seed

    def _spread_model(self, X, a):
        return HistGradientBoostingRegressor(
            loss="absolute_error", max_iter=50, max_leaf_nodes=7, l2_regularization=1.0,
            min_samples_leaf=min(200, max(20, len(X) // 20)), early_stopping=False,
            random_state=self.seed).fit(X, a)

    def _spread(self, model, X):
        return np.maximum(model.predict(X), self.min_spread)

    def oof_probabilities(self, oof, res, splits, fold_of, X=None):
        a = np.abs(res)
        spread = np.zeros(len(res))
        for tr, te in splits:
            spread[te] = self._spread(self._spread_model(X[tr], a[tr]), X[te])
        self.z_ = res / spread
        self.spread_model_ = self._spread_model(X, a)
        p = np.zeros((len(oof), bins.N_BINS))
        for k, (_, te) in enumerate(splits):
            p[te] = scaled_bin_probabilities(oof[te], spread[te], self.z_[fold_of != k])
        return p

    def predict_proba(self, medians, X=None):
        p = scaled_bin_probabilities(medians, self._spread(self.spread_model_, X), self.z_)
        return sharpen(p, self.temperature_)


class ScaledResiduals(ResearchForecaster):
    """`ScaledResidualDistribution` instead of pooled residuals."""

    def _new_distribution(self):
        return ScaledResidualDistribution(self.calibration_objective, self.seed)


class OpsNeighbourOffset(ResearchForecaster):
    """The median moved by a problem-level offset from the nearest training problems by the
    references' ATen-op bags (see forecast_variants.py). `problem_ops` ({problem id: {"ops":
    {name: count}, "dtype": str}}) must hold every training and forecast problem."""

    k = 5
    shrink = 1.0

    def __init__(self, problem_ops: dict, **kwargs):
        super().__init__(**kwargs)
        self.problem_ops = problem_ops

    def _tokens(self, pid: str) -> set[str]:
        entry = self.problem_ops[pid]
        return set(entry["ops"]) | {"dtype:" + entry["dtype"]}

    def _vectors(self, ids) -> np.ndarray:
        vocab = self.vocab_
        out = np.zeros((len(ids), len(vocab)))
        for i, pid in enumerate(ids):
            entry = self.problem_ops[pid]
            for op, count in entry["ops"].items():
                if op in vocab:
                    out[i, vocab[op]] = 1.0 + np.log(count)
            if "dtype:" + entry["dtype"] in vocab:
                out[i, vocab["dtype:" + entry["dtype"]]] = 0.5
        out *= self.idf_
        return out / (np.linalg.norm(out, axis=1, keepdims=True) + 1e-12)

    def _neighbour_offsets(self, sims: np.ndarray, errors: np.ndarray) -> np.ndarray:
        """(q,) shrunk similarity-weighted mean error of each query's k most similar problems."""
        top = np.argsort(-sims, axis=1)[:, : self.k]
        w = np.clip(np.take_along_axis(sims, top, axis=1), 0.0, None)
        return (w * errors[top]).sum(axis=1) / (w.sum(axis=1) + self.shrink)

    def _calibrate(self, distribution, X, log2s, y, groups):
        choice = self.variant_
        if choice.folds < 2:
            raise SystemExit("ops_neighbour_offset needs at least 2 training problems")
        oof = choice.oof_medians
        ids = sorted(set(groups.tolist()))
        bags = [self._tokens(pid) for pid in ids]
        tokens = sorted(set().union(*bags))
        self.vocab_ = {t: i for i, t in enumerate(tokens)}
        present = np.array([sum(t in bag for bag in bags) for t in tokens])
        self.idf_ = np.log((1 + len(ids)) / (1 + present)) + 1.0
        self.problems_ = ids
        self.problem_errors_ = np.array([np.median((log2s - oof)[groups == pid]) for pid in ids])
        self.problem_vectors_ = self._vectors(ids)
        sims = self.problem_vectors_ @ self.problem_vectors_.T
        np.fill_diagonal(sims, -np.inf)  # each training problem's offset from the others
        own = dict(zip(ids, self._neighbour_offsets(sims, self.problem_errors_)))
        oof = oof + np.array([own[g] for g in groups])
        return distribution.calibrate(oof, log2s, y, choice.splits, X)

    def offsets(self, problem_ids) -> np.ndarray:
        """(n,) the log2 offset added to the median of each row's problem."""
        ids = sorted(set(problem_ids))
        sims = self._vectors(ids) @ self.problem_vectors_.T
        for i, pid in enumerate(ids):  # a training problem is never its own neighbour
            if pid in self.problems_:
                sims[i, self.problems_.index(pid)] = -np.inf
        by = dict(zip(ids, self._neighbour_offsets(sims, self.problem_errors_)))
        return np.array([by[pid] for pid in problem_ids])

    def predict_proba_for(self, X, problem_ids) -> np.ndarray:
        return self._proba_of_median(self.predict_median(X) + self.offsets(problem_ids), X)
