"""How a measured reference time enters the learned forecaster's features.

The features (`workbench.forecast.features`) carry the reference's time as the reference
profile's roofline estimate. With a measured eager time of the reference on a GPU (ms), the
feature matrix is rewritten here: `ref_log10_us` alone ("feature") or every feature built from
the reference's time ("everywhere"). Rows without a measured time keep the estimate.
"""
from __future__ import annotations

import numpy as np

from workbench.errors import ConfigError
from workbench.forecast.features import FEATURE_NAMES, log10_us, ms_of_log10_us

IDEAL = FEATURE_NAMES.index("log2_ideal_speedup")
REF = FEATURE_NAMES.index("ref_log10_us")
SHARE = FEATURE_NAMES.index("ref_launch_share")

#: Where the reference's time comes from: the analytic estimate only, or the measured time.
REFERENCE_TIMES = ("estimate", "measured")
#: Which features a measured reference time enters (reference_time="measured"): `ref_log10_us`
#: alone, every feature built from the reference's time, or the one of those two with the
#: smaller out-of-fold error on the training problems.
REFERENCE_USES = ("feature", "everywhere", "auto")


def _known_times(reference_ms) -> tuple[np.ndarray, np.ndarray]:
    """(the times as floats, the mask of rows with a measured time: finite and > 0)."""
    ms = np.asarray(reference_ms, dtype=float)
    return ms, np.isfinite(ms) & (ms > 0)


def reference_time_error(X: np.ndarray, reference_ms) -> np.ndarray:
    """(n,) log2(measured / estimated reference time) of each row of the estimate-based feature
    matrix X (the estimate read back from `ref_log10_us`); 0 where either is unknown."""
    ms, known = _known_times(reference_ms)
    estimated_ms = ms_of_log10_us(np.asarray(X)[:, REF])
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
    so x 2^-e). Rows without a measured time keep the estimate. Rows are independent: the
    result for a row depends on that row alone."""
    if use not in ("feature", "everywhere"):
        raise ConfigError(f"use is 'feature' or 'everywhere', got {use!r}")
    X = np.array(X, dtype=float, copy=True)
    ms, known = _known_times(reference_ms)
    if use == "everywhere":
        error = reference_time_error(X, ms)  # before ref_log10_us is overwritten
        X[:, IDEAL] += error
        X[:, SHARE] *= 2.0 ** -error
    X[known, REF] = [log10_us(v) for v in ms[known]]
    return X
