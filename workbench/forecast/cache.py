"""A forecast cache keyed by (forecaster name, prompt-or-feature hash).

An LLM forecaster keys by the hash of its rendered prompt (same prompt, same answer distribution
at temperature 0; at higher temperature the cache deliberately pins the first sample); the
learned and roofline forecasters key by `feature_key` of their inputs. The cache lives in memory
and, given a path, in a small SQLite file shared by processes.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Sequence

from workbench.forecast.base import BatchForecaster, Forecaster
from workbench.records import Candidate, Forecast, Hardware, Problem


def content_hash(*parts: str) -> str:
    """sha256 over the parts (separated so ("ab", "c") != ("a", "bc")), 32 hex digits."""
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode())
        h.update(b"\x00")
    return h.hexdigest()[:32]


def feature_key(problem: Problem, candidate: Candidate, hardware: Hardware,
                parent: Candidate | None = None, relative_to: str = "reference") -> str:
    """Hash of everything a non-LLM forecaster sees: problem source and counts, candidate id
    (a hash of its normalised source), hardware fingerprint, parent id and `relative_to`."""
    return content_hash(problem.source_hash, repr((problem.flops, problem.bytes_moved,
                                                   problem.dtype)),
                        candidate.id, candidate.backend, hardware.fingerprint,
                        parent.id if parent else "", relative_to)


class ForecastCache:
    """get/put of Forecast records by (forecaster name, key). Thread-safe."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path else None
        self._mem: dict[tuple[str, str], Forecast] = {}
        self._lock = threading.Lock()
        self._db = None
        if self.path:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS forecasts (forecaster TEXT, key TEXT, "
                             "record TEXT, PRIMARY KEY (forecaster, key))")
            self._db.commit()
        self.hits = 0
        self.misses = 0

    def get(self, forecaster: str, key: str) -> Forecast | None:
        with self._lock:
            f = self._mem.get((forecaster, key))
            if f is None and self._db is not None:
                row = self._db.execute("SELECT record FROM forecasts WHERE forecaster=? AND key=?",
                                       (forecaster, key)).fetchone()
                if row:
                    f = Forecast.from_dict(json.loads(row[0]))
                    self._mem[(forecaster, key)] = f
            if f is None:
                self.misses += 1
            else:
                self.hits += 1
            return f

    def put(self, forecaster: str, key: str, forecast: Forecast) -> None:
        """Store a forecast. Abstentions are not cached: a retry may succeed."""
        if forecast.abstained:
            return
        with self._lock:
            self._mem[(forecaster, key)] = forecast
            if self._db is not None:
                self._db.execute("INSERT OR REPLACE INTO forecasts VALUES (?, ?, ?)",
                                 (forecaster, key, json.dumps(forecast.to_dict())))
                self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            if self._db is not None:
                return int(self._db.execute("SELECT COUNT(*) FROM forecasts").fetchone()[0])
            return len(self._mem)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


class CachedForecaster(BatchForecaster):
    """Wraps a forecaster; answers repeated (problem, candidate, hardware, parent) from the cache."""

    def __init__(self, inner: Forecaster, cache: ForecastCache):
        self.inner = inner
        self.cache = cache
        self.name = inner.name

    def forecast_batch(self, items: Sequence[tuple[Problem, Candidate]], hardware: Hardware,
                       relative_to: str = "reference",
                       parents: Sequence[Candidate | None] | None = None) -> list[Forecast]:
        parents = list(parents) if parents is not None else [None] * len(items)
        keys = [feature_key(p, c, hardware, par, relative_to)
                for (p, c), par in zip(items, parents)]
        out: list[Forecast | None] = [self.cache.get(self.name, k) for k in keys]
        todo = [i for i, f in enumerate(out) if f is None]
        if todo:
            fresh = self.inner.forecast_batch([items[i] for i in todo], hardware, relative_to,
                                              [parents[i] for i in todo])
            for i, f in zip(todo, fresh):
                self.cache.put(self.name, keys[i], f)
                out[i] = f
        return out  # type: ignore[return-value]

    def calibration_set(self):
        return self.inner.calibration_set()
