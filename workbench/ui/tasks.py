"""The app's long computations, as plain functions of a database path (no Panel), so that
`workbench.ui.jobs.ChildJob` can run them in a child process and kill them at once.

- `prefit_forecaster`: the learned forecaster a search spec needs, fitted (or found) exactly as
  `workbench.compose.build` would make it, so the build that follows loads it from the cache of
  fitted forecasters instead of fitting in the server.
- `heldout_forecasts`: `learned-heldout` forecasts of every correct measurement on one GPU, by
  problem-level cross-validation, stored in the database.
- `load_problem`: an uploaded problem file, loaded (its code runs) away from the server.

Both report progress through `progress(message)`.
"""
from __future__ import annotations

from typing import Any, Callable

#: Name under which held-out learned forecasts are stored.
HELD_OUT = "learned-heldout"
#: Folds of the held-out computation (problem-level cross-validation).
HELD_OUT_FOLDS = 5


def _quiet(_message: str) -> None:
    pass


def needs_fit(spec, store, problem_id: str, hardware_key: str) -> bool:
    """True when building `spec` would fit a learned forecaster that the cache of fitted
    forecasters does not hold (a cheap look: the rows and settings `compose.make_forecaster`
    fits on). A look that disagrees with compose only costs a child process that finds the fit."""
    from workbench.forecast.fitted import FitCache, cache_key, learned_settings, training_digest

    choice = spec.forecaster
    if choice.name != "learned" or choice.path:
        return False
    ms = sorted((m for m in store.measurements(hardware_key=hardware_key) if m.problem_id != problem_id),
                key=lambda m: (m.problem_id, m.candidate_id, m.hardware_key, m.measured_at, m.status.value,
                               repr(m.speedup), repr(m.reference_ms), m.hardware_json))
    digest, _ = training_digest(store.problems(), store.candidates(), ms)
    key = cache_key(digest, hardware_key, learned_settings({"reference_time": choice.reference_time}))
    return not FitCache().path_of(key).exists()


def prefit_forecaster(db: str, spec: dict[str, Any], hardware_key: str,
                      progress: Callable[[str], None] = _quiet) -> str:
    """Make the forecaster of `spec` (a `SearchSpec.to_dict()`) over the database at `db` for
    `hardware_key`, as `compose.make_forecaster` does (a learned one is fitted and cached, or
    loaded); returns its name."""
    from workbench import compose
    from workbench.problems.registry import resolve
    from workbench.spec import SearchSpec
    from workbench.store import Store

    s = SearchSpec.from_dict(spec)
    with Store(db) as store:
        problem = resolve(s.problem, store=store)
        fc = compose.make_forecaster(s, store, problem, hardware_key, progress=progress)
    return str(getattr(fc, "name", ""))


def heldout_forecasts(store, hardware_key: str, folds: int = HELD_OUT_FOLDS, seed: int = 0,
                      progress: Callable[[str], None] = _quiet) -> int:
    """Store `learned-heldout` forecasts for every ok measurement on `hardware_key`; returns how
    many. Each fold's forecaster is fitted (or loaded from the cache of fitted forecasters, so a
    second computation over the same rows is fast) on the other folds' problems."""
    from workbench.evaluate.crossval import evaluate
    from workbench.forecast.fitted import CachedLearned

    ms = store.measurements(hardware_key=hardware_key)
    made = [0]

    def factory():
        made[0] += 1
        if made[0] > 1:  # the first call is evaluate's probe (is it fittable?)
            progress(f"fold {made[0] - 1} of {folds}: fitting (or loading) a learned forecaster on the "
                     "other folds' problems...")
        return CachedLearned()

    progress(f"{len(ms)} measurements on {hardware_key.upper()}: {folds} folds of problems")
    res = evaluate(factory, store.problems(), store.candidates(), ms, folds=folds, seed=seed, gpu=hardware_key)
    fs = [f.replace(forecaster=HELD_OUT) for f in res.forecasts]
    store.put_forecasts(fs)
    progress(f"stored {len(fs)} held-out forecasts")
    return len(fs)


def heldout_job(db: str, hardware_key: str, progress: Callable[[str], None] = _quiet) -> int:
    """`heldout_forecasts` over the database at `db` (the child-process entry)."""
    from workbench.store import Store

    with Store(db) as store:
        return heldout_forecasts(store, hardware_key, progress=progress)


def load_problem(path: str, progress: Callable[[str], None] = _quiet) -> dict[str, Any]:
    """The problem file at `path` loaded (and so run) as `workbench problems import` loads it,
    as `Problem.to_dict()`: the child-process entry for an uploaded file."""
    from workbench.problems.registry import load_problem_file

    progress(f"loading {path}")
    return load_problem_file(path).to_dict()
