"""Dataset view: browse measured candidates by problem, GPU, status and bin, with each correct
candidate's speedup over eager PyTorch (`speedup`) and over torch.compile (`over_compile`)."""
from __future__ import annotations

import math
from typing import Mapping

import pandas as pd
import panel as pn
import param

from workbench import bins
from workbench.dataset.baselines import CompileBaseline, over_compile, shipped_compile_baselines

ALL = "(all)"

#: Column titles shown in the table where they differ from the column names.
TITLES = {"speedup": "speedup (over eager)", "over_compile": "over torch.compile"}


def measurements_frame(store, hardware_key: str | None = None,
                       baselines: Mapping[tuple[str, str], CompileBaseline] | None = None) -> pd.DataFrame:
    """One row per measurement, with the candidate's origin and the bin label.

    `speedup` is over the eager reference; `over_compile` is the speedup over torch.compile on
    the same problem and GPU type (`speedup_over_compile`), NaN when the measurement is not ok
    or no baseline was measured. `baselines`: keyed by (problem_id, hardware_key); None uses the
    shipped ones."""
    if baselines is None:
        baselines = shipped_compile_baselines()
    rows = []
    cands = {}
    for m in store.measurements(hardware_key=hardware_key or None):
        c = cands.get(m.candidate_id)
        if c is None:
            c = cands[m.candidate_id] = store.get_candidate(m.candidate_id)
        vs_compile = over_compile(baselines, m.problem_id, m.hardware_key, m.speedup if m.ok else None)
        rows.append({
            "candidate": m.candidate_id, "problem": m.problem_id, "gpu": m.hardware_key,
            "status": m.status.value, "speedup": m.speedup,
            "over_compile": math.nan if vs_compile is None else vs_compile,
            "bin": bins.label(m.bin) if m.bin is not None else "",
            "reference_ms": m.reference_ms, "candidate_ms": m.candidate_ms,
            "origin": c.origin if c else "", "backend": c.backend if c else "",
            "reason": (m.reason or "")[:120],
        })
    cols = ["candidate", "problem", "gpu", "status", "speedup", "over_compile", "bin", "reference_ms",
            "candidate_ms", "origin", "backend", "reason"]
    return pd.DataFrame(rows, columns=cols)


class DatasetView(pn.viewable.Viewer):
    """Filterable table over every measurement in the store; selecting a row opens it."""

    problem = param.String(default=ALL)
    gpu = param.String(default=ALL)
    status = param.String(default=ALL)
    bin = param.String(default=ALL)
    selected_candidate = param.String(default="", doc="candidate id of the clicked row")
    selected_gpu = param.String(default="")

    def __init__(self, store, baselines: Mapping[tuple[str, str], CompileBaseline] | None = None,
                 **params):
        """`baselines`: torch.compile baselines keyed by (problem_id, hardware_key); None uses
        the shipped ones."""
        super().__init__(**params)
        self._store = store
        self._baselines = baselines
        self._frame = pd.DataFrame()
        self.table = pn.widgets.Tabulator(pd.DataFrame(), pagination="remote", page_size=20,
                                          disabled=True, sizing_mode="stretch_width",
                                          selectable=1, show_index=False, titles=dict(TITLES))
        self.table.on_click(self._on_click)
        self.summary = pn.pane.Markdown("")
        self._filters = pn.Row()
        self.reload()

    def reload(self) -> None:
        self._frame = measurements_frame(self._store, baselines=self._baselines)
        f = self._frame
        opts = lambda col: [ALL] + sorted(str(v) for v in f[col].dropna().unique() if v != "")  # noqa: E731
        self._filters.objects = [
            pn.widgets.Select.from_param(self.param.problem, options=opts("problem"), name="Problem",
                                         css_classes=["wb-dataset-problem"]),
            pn.widgets.Select.from_param(self.param.gpu, options=opts("gpu"), name="GPU",
                                         css_classes=["wb-dataset-gpu"]),
            pn.widgets.Select.from_param(self.param.status, options=opts("status"), name="Status"),
            pn.widgets.Select.from_param(self.param.bin, options=[ALL] + list(bins.LABELS), name="Bin"),
        ]
        self._apply()

    @param.depends("problem", "gpu", "status", "bin", watch=True)
    def _apply(self) -> None:
        f = self._frame
        for col in ("problem", "gpu", "status", "bin"):
            v = getattr(self, col)
            if v != ALL and not f.empty:
                f = f[f[col] == v]
        self.table.value = f.reset_index(drop=True)
        if self._frame.empty:
            self.summary.object = ("**No recorded measurements.** Load the shipped data "
                                   "(`workbench dataset load-shipped`) or measure candidates on a GPU.")
            return
        ok = f[f["status"] == "ok"] if not f.empty else f
        vs = ok["over_compile"].dropna() if len(ok) else ok
        self.summary.object = (f"{len(f)} measurements shown, {len(ok)} correct"
                               + (f", median speedup {ok['speedup'].median():.2f}x" if len(ok) else "")
                               + (f", median over torch.compile {vs.median():.2f}x "
                                  f"({len(vs)} with a torch.compile baseline)" if len(vs) else ""))

    def _on_click(self, event) -> None:
        row = self.table.value.iloc[event.row]
        self.selected_gpu = str(row["gpu"])
        cid = str(row["candidate"])
        if cid == self.selected_candidate:
            self.param.trigger("selected_candidate")  # reopen the same candidate
        else:
            self.selected_candidate = cid

    def __panel__(self):
        return pn.Column(self._filters, self.summary, self.table, sizing_mode="stretch_width")
