"""Computed feature rows kept on disk, so that a candidate's features are computed once per machine.

Computing a (problem, candidate, hardware) triple's features (`workbench.forecast.features`)
parses the candidate's source and traces the reference on the meta device: on the shipped data
that is most of a learned forecaster's fit. Every fit, cross-validation fold, notebook and CLI
call reads the same candidates again, each in its own process, so `FeatureStore` keeps the rows
in a SQLite file beside the fitted models (`workbench.cachedir.cache_root()`:
`features.sqlite`).

Contract:
- a row is stored under a sha256 of the triple's content key (as `features.features` keys its
  memory) and `version()`, a hash of the source files that decide what a feature is, of the
  feature names and of the torch and numpy versions: an edit or an upgrade misses instead of
  reading a stale row;
- rows are JSON lists of floats in `FEATURE_NAMES` order (no pickle: reading the file runs no
  code); a row of another length, or that does not decode, counts as a miss;
- the store is a cache, never a source of failure: a folder that cannot be written, a locked,
  corrupt or foreign file, or any SQLite error turns the store off for this process with a
  `FeatureStoreWarning`, and features are computed as if it were not there;
- $WORKBENCH_FEATURE_STORE=0 turns it off.
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import math
import os
import sqlite3
import threading
import warnings
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from workbench.cachedir import cache_root

#: Environment variable: "0" turns the store off.
ENV_SWITCH = "WORKBENCH_FEATURE_STORE"
FILE_NAME = "features.sqlite"
#: Files (relative to the package root) whose source decides a feature's value.
_CODE_FILES = ("forecast/features.py", "forecast/reference_profile.py", "problems/ops.py", "problems/loader.py",
               "execution/hardware.py", "records.py")
_LIBRARIES = ("torch", "numpy")
#: Keys per SELECT (SQLite's bound-parameter limit is far above this).
_BATCH = 500


class FeatureStoreWarning(UserWarning):
    """The feature store could not be used; features are computed without it."""


_versions: dict[tuple[str, ...], str] = {}


def version(names: Sequence[str]) -> str:
    """sha256 (16 hex digits) of the feature-deciding sources, the names and library versions."""
    names = tuple(names)
    if names not in _versions:
        root = Path(__file__).resolve().parents[1]
        h = hashlib.sha256()
        for rel in _CODE_FILES:
            p = root / rel
            h.update(rel.encode() + b"\x00" + (p.read_bytes() if p.exists() else b"<missing>") + b"\x00")
        h.update(json.dumps(list(names)).encode())
        for lib in _LIBRARIES:
            h.update(f"{lib}={getattr(importlib.import_module(lib), '__version__', '?')}\x00".encode())
        _versions[names] = h.hexdigest()[:16]
    return _versions[names]


def row_key(content_key: tuple, names: Sequence[str]) -> str:
    """The stored key of a triple: its content key (a tuple of plain values) and `version`."""
    return hashlib.sha256(f"{version(names)}\x00{content_key!r}".encode()).hexdigest()


class FeatureStore:
    """Feature rows in one SQLite file (see module doc); safe to share by threads and processes."""

    def __init__(self, path: str | os.PathLike, names: Sequence[str]):
        self.path = Path(path)
        self.names = tuple(names)
        self._lock = threading.Lock()
        self._off = ""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._connect() as db:
                db.execute("CREATE TABLE IF NOT EXISTS features (key TEXT PRIMARY KEY, vals TEXT NOT NULL)")
        except (OSError, sqlite3.Error) as e:
            self._turn_off(e)

    @property
    def enabled(self) -> bool:
        return not self._off

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection for one transaction (committed on success), closed afterwards."""
        db = sqlite3.connect(self.path, timeout=10.0)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            with db:
                yield db
        finally:
            db.close()

    def _turn_off(self, error: BaseException) -> None:
        if not self._off:
            self._off = f"{type(error).__name__}: {error}"
            warnings.warn(f"feature store {self.path} turned off for this process ({self._off}); "
                          "features are computed without it", FeatureStoreWarning, stacklevel=3)

    def get_many(self, keys: Iterable[str]) -> dict[str, list[float]]:
        """The stored rows of `keys` that exist and decode (key -> values in `names` order)."""
        keys = list(dict.fromkeys(keys))
        out: dict[str, list[float]] = {}
        if self._off or not keys:
            return out
        try:
            with self._lock, self._connect() as db:
                for i in range(0, len(keys), _BATCH):
                    part = keys[i:i + _BATCH]
                    q = f"SELECT key, vals FROM features WHERE key IN ({','.join('?' * len(part))})"
                    for key, vals in db.execute(q, part):
                        row = _decode(vals, len(self.names))
                        if row is not None:
                            out[key] = row
        except sqlite3.Error as e:
            self._turn_off(e)
            return {}
        return out

    def put_many(self, rows: dict[str, Sequence[float]]) -> None:
        """Store rows (key -> values in `names` order); rows of another length are refused."""
        if self._off or not rows:
            return
        data = []
        for key, vals in rows.items():
            if len(vals) != len(self.names):
                raise ValueError(f"a feature row has {len(self.names)} values, got {len(vals)}")
            data.append((key, json.dumps([float(v) for v in vals])))
        try:
            with self._lock, self._connect() as db:
                db.executemany("INSERT OR REPLACE INTO features (key, vals) VALUES (?, ?)", data)
        except sqlite3.Error as e:
            self._turn_off(e)


def _decode(text: str, n: int) -> list[float] | None:
    try:
        vals = json.loads(text)
    except (TypeError, ValueError):
        return None
    if not isinstance(vals, list) or len(vals) != n \
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in vals):
        return None
    return [float(v) for v in vals]


_STORES: dict[Path, FeatureStore] = {}
_STORES_LOCK = threading.Lock()


def default_store(names: Sequence[str]) -> FeatureStore | None:
    """The store in the current cache folder (`cache_root()`, read at each call, so a
    changed $WORKBENCH_CACHE_DIR is followed), or None when $WORKBENCH_FEATURE_STORE is "0"."""
    if os.environ.get(ENV_SWITCH, "").strip() == "0":
        return None
    path = cache_root() / FILE_NAME
    with _STORES_LOCK:
        store = _STORES.get(path)
        if store is None:
            store = _STORES[path] = FeatureStore(path, names)
    return store if store.enabled else None
