"""Variant selection for the learned forecaster: which share of the roofline and which reference use.

`select_variant(X, log2s, groups, reference_ms)` compares, by the mean absolute out-of-fold
log2 error over problem-grouped folds of the training rows, every share of the ideal
log2-speedup in `offsets` (the `MedianRegressor.ideal_offset`) and, where measured reference
times are given, every way in `uses` they enter the features (`measured_reference_matrix`). It
returns a `VariantChoice`: what it chose, the errors it chose by, and the chosen variant's
out-of-fold medians and folds (what the residual distribution is calibrated on).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
from sklearn.model_selection import GroupKFold

from workbench.forecast.learned.median import OFFSET_GRID, MedianRegressor
from workbench.forecast.learned.reference import measured_reference_matrix

#: The share used when there are too few problems (< 2) for folds and several were offered.
FALLBACK_OFFSET = 0.5
#: The reference uses compared by default (see `measured_reference_matrix`).
USES = ("feature", "everywhere")


@dataclass(frozen=True, eq=False)
class VariantChoice:
    """The variant `select_variant` chose and why.

    ideal_offset: the chosen share of the ideal log2-speedup.
    reference_use: the chosen use of the measured reference times ("feature" or "everywhere"),
      None where no measured times were given (the matrix is used as given).
    offset_errors: share -> mean absolute out-of-fold log2 error, with the chosen use ({} with
      fewer than 2 folds: nothing was compared).
    use_errors: use -> the smallest of its shares' errors; only where several uses were compared.
    folds: the number of problem-grouped folds (< 2: no out-of-fold comparison was possible).
    splits, oof_medians: the folds' (train, test) indices and each training row's out-of-fold
      median under the chosen variant (None with fewer than 2 folds).
    """

    ideal_offset: float
    reference_use: str | None
    offset_errors: dict[float, float] = field(default_factory=dict)
    use_errors: dict[str, float] = field(default_factory=dict)
    folds: int = 0
    splits: tuple[tuple[np.ndarray, np.ndarray], ...] | None = None
    oof_medians: np.ndarray | None = None

    def reason(self) -> str:
        """One sentence: what was chosen and by which errors."""
        use = f", reference use {self.reference_use!r}" if self.reference_use else ""
        if self.folds < 2:
            return (f"ideal offset {self.ideal_offset:g}{use}: fewer than 2 training problems, "
                    "so nothing was compared out of fold")
        offsets = ", ".join(f"{k:g}: {v:.3f}" for k, v in self.offset_errors.items())
        out = (f"ideal offset {self.ideal_offset:g}{use}, by mean absolute out-of-fold log2 error "
               f"over {self.folds} problem-grouped folds (offsets {offsets}")
        if self.use_errors:
            out += "; uses " + ", ".join(f"{k}: {v:.3f}" for k, v in self.use_errors.items())
        return out + ")"


def select_variant(X: np.ndarray, log2s: np.ndarray, groups: np.ndarray, reference_ms=None, *,
                   offsets: Sequence[float] = OFFSET_GRID, uses: Sequence[str] = USES,
                   folds: int = 10,
                   new_median: Callable[[float], MedianRegressor] = MedianRegressor) -> VariantChoice:
    """Choose the median model's variant by out-of-fold error on the training rows.

    X: (n, features) estimate-based feature matrix of the ok training rows; log2s: (n,) their
    measured log2-speedups; groups: (n,) their problem ids (the folds are grouped by them);
    reference_ms: (n,) each row's measured reference time (ms, NaN where unknown), or None (no
    measured time enters). `folds` is capped at the number of problems; `new_median(share)`
    gives an unfitted median regressor. Ties go to the first of `offsets` / `uses`.
    """
    offsets = tuple(float(s) for s in offsets)
    candidates = tuple(uses) if reference_ms is not None else (None,)
    n_folds = min(folds, len(set(groups.tolist())))
    if n_folds < 2:
        return VariantChoice(offsets[0] if len(offsets) == 1 else FALLBACK_OFFSET, candidates[0],
                             folds=n_folds)
    splits = tuple(GroupKFold(n_splits=n_folds).split(X, log2s, groups))
    best, use_errors = None, {}
    for use in candidates:
        Xu = X if use is None else measured_reference_matrix(X, reference_ms, use)
        found, errors = None, {}
        for share in offsets:
            oof = np.zeros(len(log2s))
            for tr, te in splits:
                oof[te] = new_median(share).fit(Xu[tr], log2s[tr]).predict(Xu[te])
            errors[share] = float(np.mean(np.abs(log2s - oof)))
            if found is None or errors[share] < found[0]:
                found = (errors[share], share, oof)
        use_errors[use] = found[0]
        if best is None or found[0] < best[0][0]:
            best = (found, use, errors)
    (_, share, oof), use, errors = best
    return VariantChoice(share, use, errors, use_errors if len(candidates) > 1 else {},
                         n_folds, splits, oof)
