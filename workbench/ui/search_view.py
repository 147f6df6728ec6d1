"""Search view: pick a problem, a GPU (or a replay of one), a forecaster, a method and a budget;
start, pause, resume; watch best speedup against GPU measurements and the candidates table."""
from __future__ import annotations

import pandas as pd
import panel as pn
import param
from bokeh.models import ColumnDataSource
from bokeh.plotting import figure

from workbench.search.loop import best_curve
from workbench.ui.runner import SearchRunner, candidate_rows

METHODS = ["screen_topk", "measure_all", "selective", "uncertainty_aware"]
FORECASTERS = ["learned", "roofline", "none"]
COLUMNS = ["candidate", "status", "forecast_bin", "confidence", "speedup", "decision", "origin"]


def gpu_options(store) -> dict[str, str]:
    """Label -> value: every GPU type with recorded measurements, as a replay, plus local GPUs."""
    keys = sorted({m.hardware_key for m in store.measurements()} - {"cpu"})
    opts = {f"REPLAY of {k.upper()} (recorded measurements)": f"replay:{k}" for k in keys}
    try:
        import torch

        for i in range(torch.cuda.device_count() if torch.cuda.is_available() else 0):
            opts[f"cuda:{i} {torch.cuda.get_device_name(i)} (live)"] = f"cuda:{i}"
    except Exception:  # noqa: BLE001 - no GPU stack: replay only
        pass
    return opts


class SearchView(pn.viewable.Viewer):
    selected_candidate = param.String(default="")
    selected_gpu = param.String(default="")

    def __init__(self, store, runner: SearchRunner, **params):
        super().__init__(**params)
        self._store, self._runner = store, runner
        probs = store.problems()
        self.problem = pn.widgets.AutocompleteInput(
            name="Problem (type a name, level or tag)", options=[p.id for p in probs], value=probs[0].id if probs else "",
            case_sensitive=False, search_strategy="includes", min_characters=1)
        gpus = gpu_options(store)
        self.gpu = pn.widgets.Select(name="GPU", options=gpus, value=next(iter(gpus.values()), None))
        self.forecaster = pn.widgets.Select(name="Forecaster", options=FORECASTERS, value="learned")
        self.method = pn.widgets.Select(name="Method", options=METHODS, value="screen_topk")
        self.budget = pn.widgets.IntInput(name="Budget (GPU measurements)", value=8, start=2, end=500)
        self.start_btn = pn.widgets.Button(name="Start", button_type="primary", css_classes=["wb-start"])
        self.pause_btn = pn.widgets.Button(name="Pause")
        self.resume_btn = pn.widgets.Button(name="Resume")
        self.start_btn.on_click(self._start)
        self.pause_btn.on_click(lambda e: self._runner.stop())
        self.resume_btn.on_click(lambda e: self._runner.resume())
        self.status = pn.pane.Markdown("", css_classes=["wb-search-status"])
        self._curve = ColumnDataSource(data=dict(x=[], y=[]))
        fig = figure(title="Best measured speedup vs GPU measurements", x_axis_label="GPU measurements",
                     y_axis_label="best speedup (x)", height=260, sizing_mode="stretch_width")
        fig.step("x", "y", source=self._curve, mode="after", line_width=2)
        fig.scatter("x", "y", source=self._curve, size=6)
        self.chart = pn.pane.Bokeh(fig)
        self.table = pn.widgets.Tabulator(pd.DataFrame(columns=COLUMNS), disabled=True, show_index=False,
                                          sizing_mode="stretch_width", height=330, css_classes=["wb-candidates"])
        self.table.on_click(self._on_click)
        self._seen_version = -1
        if not gpus:
            self.status.object = ("**No recorded measurements and no GPU.** Load the shipped data: "
                                  "`workbench dataset load-shipped`.")

    def _start(self, event=None) -> None:
        try:
            sid = self._runner.start(self.problem.value, self.gpu.value, self.method.value,
                                     self.forecaster.value, self.budget.value)
            self.status.object = f"search `{sid}` started"
        except Exception as e:  # noqa: BLE001 - a bad choice is shown, not raised into the server
            self.status.object = f"**cannot start:** {e}"
        self.refresh(force=True)

    def refresh(self, force: bool = False) -> None:
        """Redraw from the store when its version moved (cheap poll)."""
        v = self._store.version()
        if v == self._seen_version and not force:
            return
        self._seen_version = v
        sid = self._runner.search_id
        if not sid:
            return
        events = self._store.events(sid)
        rows = candidate_rows(events)
        self.table.value = pd.DataFrame(rows, columns=COLUMNS)
        curve = best_curve(events)
        self._curve.data = dict(x=[c[0] for c in curve], y=[c[1] for c in curve])
        measured = sum(e["kind"] == "measured" for e in events)
        state = "running" if self._runner.running else "stopped"
        replay = "REPLAY" if str(self.gpu.value).startswith("replay:") else "LIVE"
        self.status.object = (f"search `{sid}` ({replay}, {state}): {len(rows)} candidates considered, "
                              f"{measured} GPU measurements, best {curve[-1][1]:.3f}x" if curve else
                              f"search `{sid}` ({replay}, {state}): {len(rows)} candidates considered, "
                              f"{measured} GPU measurements")
        if self._runner.error:
            self.status.object += f"\n\n**error:** `{self._runner.error.splitlines()[0]}`"

    def _on_click(self, event) -> None:
        row = self.table.value.iloc[event.row]
        gpu = str(self.gpu.value)
        self.selected_gpu = gpu.split(":", 1)[1] if gpu.startswith("replay:") else gpu
        self.selected_candidate = str(row["candidate"])

    def __panel__(self):
        controls = pn.Column(self.problem, self.gpu, self.forecaster, self.method, self.budget,
                             pn.Row(self.start_btn, self.pause_btn, self.resume_btn), width=340)
        return pn.Row(controls, pn.Column(self.status, self.chart, self.table, sizing_mode="stretch_width"),
                      sizing_mode="stretch_width")
