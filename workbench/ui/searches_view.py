"""Searches tab: every search in the database with its spec and results; reopen one in the
Search tab, export its candidates and measurements as CSV or Parquet
(`workbench.store.search_export`)."""
from __future__ import annotations

import io
from typing import Any

import pandas as pd
import panel as pn
import param
from bokeh.models import NumberFormatter

from workbench.search.events import Measured, Trusted, decode_all
from workbench.search.loop import best_curve
from workbench.store.search_export import export_name, search_tables, table_bytes
from workbench.ui.safe import code, esc

#: Seconds between rebuilds of the list while the store keeps changing (a search is running).
MIN_RELOAD_S = 3.0

COLUMNS = ["search", "created", "state", "problem", "target", "method", "forecaster", "generator", "budget",
           "seed", "best_speedup", "gpu_measurements", "considered", "trusted"]


def _target_text(spec: dict) -> str:
    t = spec.get("target")
    if not isinstance(t, dict):
        return str(t or "")
    if t.get("kind") == "replay":
        return f"replay:{t.get('key', '')}"
    return str(t.get("kind", "")) + (f":{t['index']}" if t.get("index") is not None else "")


def searches_frame(store) -> pd.DataFrame:
    """One row per stored search, newest first: its spec and its results (the stored summary of a
    search that finished or stopped, else counted from its events)."""
    rows = []
    for info in store.searches():
        spec = info.get("spec") or {}
        summary: dict[str, Any] = info.get("summary") or {}
        if not summary:
            events = decode_all(store.events(info["id"]))
            curve = best_curve(events)
            summary = {"best_speedup": curve[-1][1] if curve else None,
                       "gpu_measurements": sum(isinstance(e, Measured) for e in events),
                       "candidates_considered": sum(e.kind == "generated" for e in events),
                       "trusted": sum(isinstance(e, Trusted) for e in events)}
        method = info.get("method")
        rows.append({
            "search": info["id"], "created": info.get("created_at", ""), "state": info.get("state", ""),
            "problem": info.get("problem_id", ""), "target": _target_text(spec) or info.get("hardware_key", ""),
            "method": method.get("name", "") if isinstance(method, dict) else str(method or ""),
            "forecaster": str(info.get("forecaster") or "none"), "generator": str(info.get("generator", "")),
            "budget": info.get("budget"), "seed": info.get("seed"),
            "best_speedup": summary.get("best_speedup"), "gpu_measurements": summary.get("gpu_measurements"),
            "considered": summary.get("candidates_considered"), "trusted": summary.get("trusted")})
    df = pd.DataFrame(rows, columns=COLUMNS)
    return df.iloc[::-1].reset_index(drop=True)


class SearchesView(pn.viewable.Viewer):
    """The table of searches; a click selects one; "Open in the Search tab" sets `reopen`; the
    download buttons export the selected search's tables."""

    selected = param.String(default="", doc="the search id of the clicked row")
    reopen = param.String(default="", doc="set (and triggered) when the user asks to reopen a search")

    def __init__(self, store, **params):
        super().__init__(**params)
        self._store = store
        self._version = -1
        self._loaded_at = 0.0
        self.table = pn.widgets.Tabulator(pd.DataFrame(columns=COLUMNS), disabled=True, show_index=False,
                                          pagination="remote", page_size=15, sizing_mode="stretch_width",
                                          formatters={"best_speedup": NumberFormatter(format="0.000",
                                                                                      nan_format="-")},
                                          css_classes=["wb-searches"])
        self.table.on_click(self._on_click)
        self.info = pn.pane.HTML("<p>Click a search to reopen or export it.</p>", css_classes=["wb-searches-info"],
                                 sizing_mode="stretch_width")
        self.open_btn = pn.widgets.Button(label="Open in the Search tab", button_type="primary", disabled=True,
                                          css_classes=["wb-reopen"])
        self.open_btn.on_click(self._reopen)
        self.downloads = {
            (table, fmt): pn.widgets.FileDownload(callback=self._export_cb(table, fmt), filename=f"{table}.{fmt}",
                                                  label=f"{table} ({fmt.upper()})", disabled=True,
                                                  css_classes=[f"wb-export-{table}-{fmt}"])
            for table in ("candidates", "measurements") for fmt in ("csv", "parquet")}
        self.refresh(force=True)

    def refresh(self, force: bool = False) -> None:
        """Rebuild the list when the store's version moved."""
        import time

        v = self._store.version()
        if not force and (v == self._version or time.monotonic() - self._loaded_at < MIN_RELOAD_S):
            return
        self._version, self._loaded_at = v, time.monotonic()
        self.table.value = searches_frame(self._store)

    def _on_click(self, event) -> None:
        if event.row is None or event.row >= len(self.table.value):
            return
        sid = str(self.table.value.iloc[event.row]["search"])
        self.select(sid)

    def select(self, search_id: str) -> None:
        """Make `search_id` the one the buttons act on."""
        info = self._store.get_search(search_id)
        if info is None:
            return
        self.selected = search_id
        self.info.object = (f"<p>Search {code(search_id)} of {code(info.get('problem_id', ''))}, "
                            f"{esc(info.get('state', ''))}, started {esc(info.get('created_at', ''))}.</p>")
        self.open_btn.disabled = False
        for (table, fmt), w in self.downloads.items():
            w.filename = export_name(search_id, table, fmt)
            w.disabled = False

    def _export_cb(self, table: str, fmt: str):
        def cb():
            if not self.selected:
                return io.BytesIO(b"")
            return io.BytesIO(table_bytes(search_tables(self._store, self.selected)[table], fmt))
        return cb

    def _reopen(self, event=None) -> None:
        if self.selected:
            if self.reopen == self.selected:
                self.param.trigger("reopen")
            else:
                self.reopen = self.selected

    def __panel__(self):
        return pn.Column(self.info, pn.Row(self.open_btn, *self.downloads.values()), self.table,
                         sizing_mode="stretch_width")
