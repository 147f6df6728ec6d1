"""The one background search runner of a server process, and the table a view shows of a run.

A search runs in a daemon thread; it writes every event to the store. Views never talk to the
thread: they poll `store.version()` and rebuild from the store's events, so a second browser tab
(or another process) sees the same run.
"""
from __future__ import annotations

import argparse
import threading
import traceback
from typing import Any

from workbench import bins


class SearchRunner:
    """Starts, pauses (stops after the current step) and resumes one search at a time."""

    def __init__(self, store):
        self.store = store
        self.search_id: str | None = None
        self.error: str = ""
        self._thread: threading.Thread | None = None
        self._run = None
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, problem: str, gpu: str, method: str, forecaster: str, budget: int, seed: int = 0,
              k: int = 2, m: int = 3) -> str:
        """Build the run in the caller's thread (so config errors surface), then run it in the background."""
        from workbench.commands.search import build_run

        with self._lock:
            if self.running:
                raise RuntimeError("a search is already running; stop it first")
            args = argparse.Namespace(problem=problem, gpu=gpu, method=method, forecaster=forecaster,
                                      forecaster_path=None, generator="auto", budget=int(budget), seed=int(seed),
                                      k=int(k), m=int(m), selector="puct", max_seeds=2)
            run = build_run(self.store, args)
            run.start()
            self._run, self.search_id, self.error = run, run.search_id, ""
            self._thread = threading.Thread(target=self._loop, name="wb-search", daemon=True)
            self._thread.start()
            return run.search_id

    def resume(self) -> None:
        with self._lock:
            if self.running or self._run is None:
                return
            self._thread = threading.Thread(target=self._loop, name="wb-search", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        try:
            self._run.run(progress=False)
        except Exception as e:  # noqa: BLE001 - shown in the UI, the events so far are kept
            self.error = f"{type(e).__name__}: {e}\n{traceback.format_exc()[-1500:]}"

    def stop(self) -> None:
        if self._run is not None:
            self._run.stop()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)


def candidate_rows(events: list[dict]) -> list[dict[str, Any]]:
    """One row per generated candidate of a search, from its events (newest last)."""
    rows: dict[str, dict[str, Any]] = {}
    for e in events:
        p, kind = e["payload"], e["kind"]
        if kind == "generated":
            c = p["candidate"]
            rows[c["id"]] = {"candidate": c["id"], "origin": c.get("origin", ""), "status": "generated",
                             "forecast_bin": "", "confidence": None, "speedup": None, "decision": ""}
        elif kind == "forecast":
            f = p["forecast"]
            r = rows.get(f["candidate_id"])
            if r is not None:
                probs = f["probabilities"]
                top = max(range(len(probs)), key=probs.__getitem__)
                r["forecast_bin"] = bins.label(top)
                r["confidence"] = round(max(probs) / (sum(probs) or 1.0), 3)
        elif kind == "trusted":
            r = rows.get(p["candidate_id"])
            if r is not None:
                r["decision"], r["status"] = "trusted", "trusted (not measured)"
        elif kind == "measured":
            m = p["measurement"]
            r = rows.get(m["candidate_id"])
            if r is not None:
                r["decision"], r["status"] = "measured", m["status"]
                r["speedup"] = m.get("speedup")
    return list(rows.values())
