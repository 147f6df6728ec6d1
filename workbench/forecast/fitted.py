"""Fitted learned forecasters cached on disk, keyed by what they were fitted on.

    from workbench.forecast.fitted import fit_or_load

    fc = fit_or_load(problems, candidates, measurements, hardware_key="h100",
                     settings={"reference_time": "measured"}, progress=print)

Fitting a `LearnedForecaster` on the shipped data takes tens of seconds to minutes on a small
machine; the CLI (`workbench search`, `workbench forecast`), the app's search runner and the
notebooks all call `fit_or_load`, so a fit made by one of them is loaded by the others.

The cache key is a sha256 over:
- `training_digest`: the content of every training row (each measurement's problem, candidate
  and measured fields, in one canonical order), so new, removed or changed measurements miss;
- the hardware key the rows were chosen for;
- the forecaster's settings (its constructor arguments, JSON);
- `code_version`: a hash of the source files that decide what `fit` computes (the learned
  forecaster, its features, bins, records, the GPU peak table) and of the numpy, scipy,
  scikit-learn and joblib versions, so an edit or an upgrade refits instead of loading a stale
  or unreadable model.

Where: `cache_dir` argument, else $WORKBENCH_CACHE_DIR, else the user's cache folder
($XDG_CACHE_HOME or ~/.cache, then `gpu-forecasters-workbench/fitted`). A write goes to a
temporary file in the same folder and is moved into place with `os.replace`, so a crash never
leaves a half-written entry under the final name; an entry that cannot be read back (truncated,
from another version, not a forecaster) is refitted with a `FitCacheWarning` and overwritten.
At most `max_entries` entries are kept; the least recently used go first. Two processes that
want the same entry at once (a notebook and the app, two test processes) fit it once: the
second waits on the entry's lock file and loads what the first stored.

Security: an entry is a pickle (joblib), and loading a pickle runs code chosen by whoever wrote
the file. The cache folder must be the user's own (the default is); never point
$WORKBENCH_CACHE_DIR at a folder that others can write to.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import joblib

from workbench.cachedir import APP_DIR, ENV_CACHE_DIR, cache_root  # noqa: F401 (re-exported)
from workbench.errors import ConfigError
from workbench.forecast.base import BatchForecaster
from workbench.records import Candidate, Measurement, Problem

#: Stored in every entry; an entry with another format is refitted.
ENTRY_FORMAT = "workbench.fitted/1"
#: Entries kept per cache folder by default (each search of a new problem fits its own model:
#: the searched problem's measurements are left out of its training rows).
MAX_ENTRIES = 64

#: Files (relative to the package root) whose source decides what a fit computes.
_CODE_FILES = ("forecast/learned/__init__.py", "forecast/learned/adapted.py",
               "forecast/learned/distribution.py", "forecast/learned/forecaster.py",
               "forecast/learned/median.py", "forecast/learned/reference.py",
               "forecast/learned/selection.py", "forecast/features.py", "forecast/reference_profile.py",
               "forecast/roofline.py", "forecast/base.py", "bins.py", "records.py",
               "execution/hardware.py")
_LIBRARIES = ("numpy", "scipy", "sklearn", "joblib")

Progress = Callable[[str], None]
Fitter = Callable[[Sequence[Problem], Sequence[Candidate], Sequence[Measurement]], Any]


class FitCacheWarning(UserWarning):
    """A cache entry could not be used (unreadable, truncated, another format); it is refitted."""


def cache_dir(path: str | os.PathLike | None = None) -> Path:
    """The folder of fitted models: `cache_root(path)` / fitted."""
    return cache_root(path) / "fitted"


_code_version: str | None = None


def code_version() -> str:
    """sha256 (16 hex digits) of the fit-deciding source files and library versions."""
    global _code_version
    if _code_version is None:
        import importlib

        root = Path(__file__).resolve().parents[1]
        h = hashlib.sha256()
        for rel in _CODE_FILES:
            h.update(rel.encode() + b"\x00")
            p = root / rel
            h.update(p.read_bytes() if p.exists() else b"<missing>")
            h.update(b"\x00")
        for lib in _LIBRARIES:
            version = getattr(importlib.import_module(lib), "__version__", "?")
            h.update(f"{lib}={version}\x00".encode())
        _code_version = h.hexdigest()[:16]
    return _code_version


def training_digest(problems: Sequence[Problem], candidates: Sequence[Candidate],
                    measurements: Sequence[Measurement]) -> tuple[str, int]:
    """(sha256 of the training rows, number of rows): every measurement whose problem and
    candidate are given (the rows `fit` joins), in the order given, with the fields a fit reads:
    the problem's record, the candidate's source and backend, and the measurement's status,
    times, speedup and hardware."""
    P = {p.id: p for p in problems}
    C = {c.id: c for c in candidates}
    problem_hash: dict[str, str] = {}
    candidate_hash: dict[str, str] = {}
    h = hashlib.sha256()
    n = 0
    for m in measurements:
        p, c = P.get(m.problem_id), C.get(m.candidate_id)
        if p is None or c is None:
            continue
        if p.id not in problem_hash:
            problem_hash[p.id] = hashlib.sha256(
                json.dumps(p.to_dict(), sort_keys=True, default=str).encode()).hexdigest()
        if c.id not in candidate_hash:
            candidate_hash[c.id] = hashlib.sha256(
                f"{c.backend}\x00{c.source}".encode()).hexdigest()
        row = (problem_hash[p.id], candidate_hash[c.id], m.hardware_key, m.hardware_json,
               m.status.value, repr(m.speedup), repr(m.reference_ms), repr(m.candidate_ms))
        h.update("\x1f".join(row).encode())
        h.update(b"\x1e")
        n += 1
    return h.hexdigest()[:32], n


def cache_key(digest: str, hardware_key: str, settings: Mapping[str, Any], kind: str = "learned",
              version: str | None = None) -> str:
    """sha256 (32 hex digits) of everything a fit depends on (see the module doc)."""
    try:
        settings_json = json.dumps(dict(settings), sort_keys=True)
    except TypeError as e:
        raise ConfigError(f"forecaster settings must be JSON values (str, number, bool, None), "
                          f"got {settings!r}") from e
    blob = json.dumps({"format": ENTRY_FORMAT, "kind": kind, "digest": digest,
                       "hardware": hardware_key, "settings": settings_json,
                       "code": version if version is not None else code_version()}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


class FitCache:
    """get/put of fitted models by key in one folder (atomic writes, LRU trimming)."""

    def __init__(self, path: str | os.PathLike | None = None, max_entries: int = MAX_ENTRIES):
        if max_entries < 1:
            raise ConfigError(f"max_entries must be at least 1, got {max_entries}")
        self.dir = cache_dir(path)
        self.max_entries = max_entries

    def path_of(self, key: str) -> Path:
        return self.dir / f"{key}.joblib"

    def get(self, key: str) -> Any | None:
        """The model stored under `key`, or None when there is none. An entry that cannot be
        read back is removed and reported with a FitCacheWarning (the caller refits)."""
        model, problem = self.read(key)
        if problem:
            warnings.warn(problem, FitCacheWarning, stacklevel=2)
        return model

    def read(self, key: str) -> tuple[Any | None, str]:
        """(the model under `key` or None, "" or why the entry there was unreadable and removed)."""
        path = self.path_of(key)
        if not path.exists():
            return None, ""
        try:
            blob = joblib.load(path)
            if not isinstance(blob, dict) or blob.get("format") != ENTRY_FORMAT or blob.get("key") != key:
                raise ValueError("not an entry of this format and key")
            model = blob["model"]
        except Exception as e:  # noqa: BLE001 - any unreadable entry is refitted the same way
            try:
                path.unlink()
            except OSError:
                pass
            return None, (f"fitted-forecaster cache entry {path} is unreadable "
                          f"({type(e).__name__}: {e}); refitting it")
        try:
            os.utime(path)  # most recently used: trimmed last
        except OSError:
            pass
        return model, ""

    def put(self, key: str, model: Any, meta: Mapping[str, Any] | None = None) -> Path:
        """Store `model` under `key` atomically (temporary file, then os.replace); trims the
        folder to `max_entries`. Returns the entry's path."""
        self.dir.mkdir(parents=True, exist_ok=True)
        path = self.path_of(key)
        fd, tmp = tempfile.mkstemp(prefix=f".{key}.", suffix=".tmp", dir=self.dir)
        try:
            with os.fdopen(fd, "wb") as f:
                joblib.dump({"format": ENTRY_FORMAT, "key": key, "meta": dict(meta or {}),
                             "model": model}, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        self._trim()
        return path

    @contextlib.contextmanager
    def fitting(self, key: str, on_wait: Callable[[], None] | None = None):
        """Held while this process fits the entry `key`: another process that wants the same
        entry waits here (`on_wait()` is called once when it has to) and then reads what the
        first stored, instead of fitting the same rows beside it. A lock file per key
        (`.<key>.lock`, fcntl.flock: let go when its holder exits, however it ends), removed by
        its holder when done (a process that opened it before still waits on it and then finds
        the entry; one that comes later makes a new one and finds the entry too); without a
        writable folder there is no lock and each process fits on its own."""
        import fcntl

        path = self.dir / f".{key}.lock"
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            fh = open(path, "a+")
        except OSError:
            yield
            return
        try:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if on_wait is not None:
                    on_wait()
                fcntl.flock(fh, fcntl.LOCK_EX)
            yield
        finally:
            try:
                path.unlink()
            except OSError:
                pass
            fh.close()

    def entries(self) -> list[Path]:
        """Stored entries, least recently used first."""
        if not self.dir.exists():
            return []
        files = []
        for p in self.dir.glob("*.joblib"):
            try:
                files.append((p.stat().st_mtime, p))
            except OSError:  # removed by another process meanwhile
                pass
        return [p for _, p in sorted(files)]

    def _trim(self) -> None:
        old = self.entries()
        for p in old[: max(0, len(old) - self.max_entries)]:
            try:
                p.unlink()
            except OSError:
                pass


def learned_settings(settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """`LearnedForecaster` constructor arguments with every default filled in, so that {} and
    the same values spelled out share one cache entry; unknown names raise ConfigError."""
    import inspect

    from workbench.forecast.learned import LearnedForecaster

    params = inspect.signature(LearnedForecaster.__init__).parameters
    full = {k: p.default for k, p in params.items() if k != "self"}
    unknown = sorted(set(settings or {}) - set(full))
    if unknown:
        raise ConfigError(f"unknown learned forecaster settings {unknown}; "
                          f"known: {', '.join(sorted(full))}")
    full.update(settings or {})
    return full


def _learned_fitter(settings: Mapping[str, Any]) -> Fitter:
    from workbench.forecast.learned import LearnedForecaster

    def fit(problems, candidates, measurements):
        return LearnedForecaster(**dict(settings)).fit(problems, candidates, measurements)
    return fit


def _row_order(m: Measurement) -> tuple:
    return (m.problem_id, m.candidate_id, m.hardware_key, m.measured_at, m.status.value,
            repr(m.speedup), repr(m.reference_ms), m.hardware_json)


def fit_or_load(problems: Sequence[Problem], candidates: Sequence[Candidate],
                measurements: Sequence[Measurement], *, hardware_key: str = "",
                settings: Mapping[str, Any] | None = None, cache_dir: str | os.PathLike | None = None,
                progress: Progress | None = None, fitter: Fitter | None = None,
                kind: str = "learned", use_cache: bool = True) -> Any:
    """A forecaster fitted on these rows: loaded from the cache when the same rows, hardware
    key, settings and code were fitted before, else fitted (and stored).

    `settings`: `LearnedForecaster` constructor arguments (JSON values; defaults filled in by
    `learned_settings`). The rows are fitted in one canonical order (sorted by problem,
    candidate, GPU, time), so the same set of rows fits and finds the same model whatever order
    the caller passes them in. `fitter(problems,
    candidates, measurements)` replaces the default fit `LearnedForecaster(**settings).fit(...)`
    (then `kind` names what it fits, for the key and the messages). `progress` receives stage
    messages ("fitting learned forecaster on N rows (H100)...", "... done in X s", "loaded
    cached ..."). `use_cache=False` fits without reading or writing the cache. The returned
    object is the caller's own: changing it (e.g. recording reference times) does not touch
    the stored entry.
    """
    settings = dict(settings or {}) if fitter is not None else learned_settings(settings)
    say = progress or (lambda _msg: None)
    gpu = f" ({hardware_key.upper()})" if hardware_key else ""
    fit = fitter or _learned_fitter(settings)
    # One canonical row order: the same rows fit the same model, however the caller ordered them.
    measurements = sorted(measurements, key=_row_order)
    digest, n_rows = training_digest(problems, candidates, measurements)
    store = FitCache(cache_dir) if use_cache else None
    what = f"{kind} forecaster on {n_rows} rows{gpu}"
    if store is None:
        return _fit_timed(fit, problems, candidates, measurements, say, what)[0]
    key = cache_key(digest, hardware_key, settings, kind)
    t0 = time.perf_counter()
    model, problem = store.read(key)
    if problem:
        say(f"warning: {problem}")
        warnings.warn(problem, FitCacheWarning, stacklevel=2)
    if model is not None:
        say(f"loaded cached {kind} forecaster fitted on {n_rows} rows{gpu} "
            f"in {time.perf_counter() - t0:.1f} s ({store.path_of(key)})")
        return model
    # One process fits an entry; another that wants it meanwhile waits and loads it.
    with store.fitting(key, on_wait=lambda: say(f"waiting for another process fitting the same {what}...")):
        model, _ = store.read(key)
        if model is not None:
            say(f"loaded cached {kind} forecaster fitted on {n_rows} rows{gpu} by another process "
                f"({store.path_of(key)})")
            return model
        model, seconds = _fit_timed(fit, problems, candidates, measurements, say, what)
        try:
            store.put(key, model, {"rows": n_rows, "hardware_key": hardware_key, "settings": settings,
                                   "fit_s": round(seconds, 3), "kind": kind})
        except OSError as e:  # a read-only or full disk costs the next start a refit, not this run
            say(f"warning: could not write the fitted-forecaster cache in {store.dir} ({e}); "
                f"set {ENV_CACHE_DIR} to a writable folder")
    return model


def _fit_timed(fit: Fitter, problems, candidates, measurements, say: Progress, what: str) -> tuple[Any, float]:
    """`fit(...)` with "fitting <what>..." said before and after; (the model, its seconds)."""
    say(f"fitting {what}...")
    t0 = time.perf_counter()
    model = fit(problems, candidates, measurements)
    seconds = time.perf_counter() - t0
    say(f"fitting {what}... done in {seconds:.1f} s")
    return model, seconds


class CachedLearned(BatchForecaster):
    """An unfitted learned forecaster whose `fit` is `fit_or_load`: rows, settings and code that
    were fitted before are loaded from the fit cache instead of refitted. For `evaluate` (which
    scores what `fit` returns): folds fitted by an earlier evaluation, or another notebook, on
    the same training rows load in seconds. `fit` returns the fitted `LearnedForecaster`, not
    self; this object forecasts nothing itself (ConfigError).

    `settings`, `hardware_key`, `cache_dir`, `progress`: as for `fit_or_load`."""

    name = "learned"

    def __init__(self, settings: Mapping[str, Any] | None = None, *, hardware_key: str = "",
                 cache_dir: str | os.PathLike | None = None, progress: Progress | None = None):
        self.settings = learned_settings(settings)  # unknown names fail here, not at the first fold
        self.hardware_key = hardware_key
        self.cache_dir = cache_dir
        self.progress = progress

    def fit(self, problems: Sequence[Problem], candidates: Sequence[Candidate],
            measurements: Sequence[Measurement]):
        """The learned forecaster fitted on these rows, loaded from the cache when it holds them."""
        return fit_or_load(problems, candidates, measurements, hardware_key=self.hardware_key,
                           settings=self.settings, cache_dir=self.cache_dir, progress=self.progress)

    def forecast_batch(self, items, hardware, relative_to="reference", parents=None):
        raise ConfigError("CachedLearned forecasts nothing itself: forecast with the forecaster "
                          "its fit returns")
