"""Compare tab: does the forecaster save GPU time on this problem? Pick a problem (a landscape,
a problem with recorded measurements, any problem of the database, or an uploaded
KernelBench-style file), a GPU or its replay, a budget and the methods; Run compares them at that
budget (`workbench.ui.compare`) and draws one curve per method, best speedup against GPU
measurements, with the space's global best where it is known, and a table of what each method
found and the measurements it saved."""
from __future__ import annotations

import tempfile
from pathlib import Path

import panel as pn
from bokeh.core.property.vectorization import value
from bokeh.models import ColumnDataSource
from bokeh.palettes import Category10_10
from bokeh.plotting import figure

from workbench.errors import WorkbenchError
from workbench.ui.compare import (DEFAULT_METHODS, FORECASTERS, METHODS, CompareRequest, CompareRunner,
                                  Comparison, landscape_problems)
from workbench.ui.safe import code, esc
from workbench.ui.search_form import parse_budget
from workbench.ui.search_view import gpu_options
from workbench.ui.sources import bokeh_edits, set_data

#: Seconds an uploaded problem file may take to load (it is run, in a child process, to check it).
UPLOAD_TIMEOUT_S = 120


def load_upload(path: str):
    """The Problem in an uploaded file, loaded in a child process (`workbench.ui.tasks.load_problem`)."""
    from workbench.records import Problem
    from workbench.ui.jobs import ChildJob

    job = ChildJob("workbench.ui.tasks:load_problem", {"path": path})
    return Problem.from_dict(job.run(timeout_s=UPLOAD_TIMEOUT_S))


def problem_choices(store) -> dict[str, str]:
    """Label -> problem id: landscapes first (with their GPU and size), then problems with
    recorded measurements, then every other problem of the database."""
    out: dict[str, str] = {}
    for gpu, probs in landscape_problems().items():
        for pid, n in probs.items():
            out[f"{pid} · landscape on {gpu.upper()} ({n} points)"] = pid
    recorded: dict[str, set[str]] = {}
    for m in store.measurements():
        recorded.setdefault(m.problem_id, set()).add(m.hardware_key.upper())
    listed = set(out.values())
    for pid in sorted(recorded):
        if pid not in listed:
            out[f"{pid} · recorded on {', '.join(sorted(recorded[pid]))}"] = pid
    for p in store.problems():
        if p.id not in listed and p.id not in recorded:
            out[f"{p.id} · no recording (live only)"] = p.id
    return out


def results_html(c: Comparison) -> str:
    """The comparison's table: per method its best, share of the reference best, measurements to
    come within 2% of it and the measurements saved, candidates considered and trusted."""
    budget = c.request.budget
    where = {"landscape": f"landscape of {c.space_size} measured points on {c.gpu.upper()}",
             "recording": f"replay of {c.space_size} recorded kernels on {c.gpu.upper()}",
             "live": f"live on {esc(c.gpu.upper() or c.request.target)}"}[c.source]
    if c.global_best is not None:
        of = "every point of the landscape" if c.source == "landscape" else "the best recorded kernel"
        ref = f"global best {c.global_best:.3f}x ({of})"
    elif c.reference_best is not None:
        ref = f"no global best known; reference: the best any method found, {c.reference_best:.3f}x"
    else:
        ref = "no correct kernel found"
    fc = f", forecaster {code(c.forecaster)}" if c.forecaster else ""
    head = (f"<p class='wb-compare-summary'>{code(c.request.problem_id)}: {esc(where)}; budget {budget} GPU "
            f"measurements each, seed {c.request.seed}{fc}; {esc(ref)}. Compared in {c.seconds:.1f} s.</p>")
    rows = []
    for cv in c.curves:
        best = f"{cv.best:.3f}x" if cv.best is not None else "-"
        share = (f"{100 * cv.best / c.reference_best:.1f}%" if cv.best is not None and c.reference_best else "-")
        reach = str(cv.to_reference) if cv.to_reference is not None else f"not within {budget}"
        saved = cv.saved(budget)
        rows.append(f"<tr class='wb-compare-row'><td>{esc(cv.method)}</td><td>{best}</td><td>{share}</td>"
                    f"<td>{cv.spent}</td><td>{esc(reach)}</td>"
                    f"<td class='wb-saved'>{'-' if saved is None else saved}</td>"
                    f"<td>{cv.considered}</td><td>{cv.trusted}</td><td>{esc(cv.note)}</td></tr>")
    return head + ("<table class='wb-compare-table'><tr><th>method</th><th>best speedup</th><th>of the reference "
                   "best</th><th>GPU measurements</th><th>measurements to within 2% of it</th><th>measurements "
                   "saved</th><th>candidates considered</th><th>trusted forecasts</th><th>note</th></tr>"
                   + "".join(rows) + "</table>")


class CompareView(pn.viewable.Viewer):
    """The form, the chart and the table of the Compare tab. `refresh()` redraws when the
    comparison moved (called by the app's periodic callback)."""

    def __init__(self, store, jobs=None, scratch=None, **params):
        super().__init__(**params)
        from workbench.store import Store

        self._store = store
        self._tmp = tempfile.TemporaryDirectory(prefix="wb-compare-")
        scratch = scratch or Store(Path(self._tmp.name) / "compare.sqlite")
        self.runner = CompareRunner(store, scratch)
        self._choices = problem_choices(store)
        first = next(iter(self._choices), None)
        self.problem = pn.widgets.Select(name="Problem", options=self._choices,
                                         value=self._choices[first] if first else None,
                                         css_classes=["wb-compare-problem"])
        self.upload = pn.widgets.FileInput(accept=".py", name="or upload a KernelBench-style problem file",
                                           css_classes=["wb-compare-upload"])
        self.upload.param.watch(self._uploaded, "value")
        gpus = gpu_options(store)
        for gpu in landscape_problems():
            gpus.setdefault(f"REPLAY of {gpu.upper()} (recorded measurements)", f"replay:{gpu}")
        self.gpu = pn.widgets.Select(name="GPU", options=gpus, css_classes=["wb-compare-gpu"],
                                     value=next((v for v in gpus.values() if v == "replay:h200"),
                                                next(iter(gpus.values()), None)))
        self.forecaster = pn.widgets.Select(name="Forecaster", options=list(FORECASTERS),
                                            css_classes=["wb-compare-forecaster"])
        self.budget = pn.widgets.TextInput(name="Budget (GPU measurements, each method)", value="32",
                                           css_classes=["wb-compare-budget"])
        self.methods = pn.widgets.CheckBoxGroup(options={v: k for k, v in METHODS.items()},
                                                value=list(DEFAULT_METHODS), css_classes=["wb-compare-methods"])
        self.run_btn = pn.widgets.Button(label="Compare", button_type="primary", css_classes=["wb-compare-run"])
        self.cancel_btn = pn.widgets.Button(label="Cancel", css_classes=["wb-compare-cancel"], disabled=True)
        self.run_btn.on_click(self.run)
        self.cancel_btn.on_click(lambda e: (self.runner.cancel(), self.refresh(force=True)))
        self.status = pn.pane.HTML("<p>Pick a problem, a GPU, a budget and the methods, then Compare.</p>",
                                   css_classes=["wb-compare-status"], sizing_mode="stretch_width")
        self.table = pn.pane.HTML("", css_classes=["wb-compare-results"], sizing_mode="stretch_width")
        self._sources = [ColumnDataSource(data=dict(x=[], y=[])) for _ in METHODS]
        self._best = ColumnDataSource(data=dict(x=[], y=[]))
        self.fig = figure(title="Best speedup found vs GPU measurements, each method at the same budget",
                          x_axis_label="GPU measurements", y_axis_label="best speedup (x)", height=360,
                          sizing_mode="stretch_width")
        self._lines = []
        for i, src in enumerate(self._sources):
            self._lines.append(self.fig.step("x", "y", source=src, mode="after", line_width=2,
                                             color=Category10_10[i % 10], legend_label=f"method {i}",
                                             visible=False))
        self._best_line = self.fig.line("x", "y", source=self._best, line_dash="dashed", color="black",
                                        line_width=2, legend_label="global best", visible=False)
        self.fig.legend.location = "bottom_right"
        for item in self.fig.legend.items:
            item.visible = False
        self.chart = pn.pane.Bokeh(self.fig)
        self._seen = -1
        self._error = ""

    # ------------------------------------------------------------------ actions
    async def _uploaded(self, event) -> None:
        """Load an uploaded problem file and offer it. The file is run to check it (as
        `workbench problems import` does), so it runs in a child process, killed after
        UPLOAD_TIMEOUT_S, off the server's event loop. It has no recording: compared live."""
        import asyncio

        data = self.upload.value
        name = Path(self.upload.filename or "uploaded.py").name
        if not data:
            return
        if not name.endswith(".py") or not name[:-3].replace("_", "").isalnum():
            self._error = (f"upload {name!r}: name the file like a KernelBench problem, letters, digits and _ "
                           "ending in .py (e.g. 19_ReLU.py)")
            self.refresh(force=True)
            return
        folder = Path(self._tmp.name) / "uploads"
        folder.mkdir(exist_ok=True)
        path = folder / name
        path.write_bytes(data)
        self.status.object = f"<p>checking {esc(name)}...</p>"
        try:
            problem = await asyncio.get_running_loop().run_in_executor(None, load_upload, str(path))
        except WorkbenchError as e:
            self._error = f"upload {name}: {e}"
            self.refresh(force=True)
            return
        self._store.put_problem(problem)
        label = f"{problem.id} · uploaded file (no recording: live only)"
        self._choices = {label: problem.id, **{k: v for k, v in self._choices.items() if v != problem.id}}
        self.problem.options = self._choices
        self.problem.value = problem.id
        self._error = ""
        self.status.object = (f"<p>Loaded {code(problem.id)} from {esc(name)}. It has no recorded measurements: a "
                              "comparison of it measures live, on a GPU of this machine.</p>")

    def request(self) -> CompareRequest:
        """The comparison the form describes (ConfigError with a message when it is not one)."""
        from workbench.errors import ConfigError

        if not self.problem.value:
            raise ConfigError("pick a problem to compare on")
        if not self.gpu.value:
            raise ConfigError("no GPU and no recording to compare on")
        return CompareRequest(str(self.problem.value), str(self.gpu.value), parse_budget(self.budget.value),
                              tuple(self.methods.value), forecaster=str(self.forecaster.value))

    def run(self, event=None) -> None:
        try:
            self.runner.start(self.request())
            self._error = ""
        except WorkbenchError as e:
            self._error = f"cannot compare: {e}"
        self.refresh(force=True)

    # ------------------------------------------------------------------ drawing
    def refresh(self, force: bool = False) -> None:
        r = self.runner
        seen = (r.version, r.phase, self._error)
        if seen == self._seen and not force:
            return
        self._seen = seen
        self.run_btn.disabled = r.phase == "running"
        self.cancel_btn.disabled = r.phase != "running"
        if self._error:
            self.status.object = f"<p><b>{esc(self._error)}</b></p>"
        elif r.phase == "running":
            self.status.object = f"<p>comparing: {esc(r.message)}</p>"
        elif r.phase == "failed":
            self.status.object = f"<p><b>comparison failed:</b> {esc(r.error)}</p>"
        elif r.phase == "cancelled":
            self.status.object = "<p>comparison cancelled.</p>"
        elif r.phase == "done":
            self.status.object = "<p>comparison done.</p>"
        self._draw(r.result if r.phase == "done" else None)

    def _item(self, renderer):
        return next((it for it in self.fig.legend.items if renderer in it.renderers), None)

    def _draw(self, c: Comparison | None) -> None:
        """One step line per method (legend: the method), the global best as a dashed line."""
        curves = c.curves if c is not None else []
        budget = c.request.budget if c is not None else 0
        with bokeh_edits():
            for i, line in enumerate(self._lines):
                cv = curves[i] if i < len(curves) else None
                line.visible = cv is not None
                item = self._item(line)
                if item is not None:
                    item.visible = cv is not None
                    if cv is not None:
                        item.label = value(cv.method)
            shown = c is not None and c.global_best is not None
            self._best_line.visible = shown
            item = self._item(self._best_line)
            if item is not None:
                item.visible = shown
                if shown:
                    item.label = value(f"global best {c.global_best:.3f}x")
        for i, src in enumerate(self._sources):
            cv = curves[i] if i < len(curves) else None
            if cv is None or not cv.points:
                set_data(src, dict(x=[], y=[]))
                continue
            xs, ys = [p[0] for p in cv.points], [p[1] for p in cv.points]
            if cv.spent > xs[-1]:  # carried on to the measurements the method spent
                xs, ys = xs + [cv.spent], ys + [ys[-1]]
            set_data(src, dict(x=xs, y=ys))
        if c is not None and c.global_best is not None:
            set_data(self._best, dict(x=[0, budget], y=[c.global_best, c.global_best]))
        else:
            set_data(self._best, dict(x=[], y=[]))
        self.table.object = results_html(c) if c is not None else ""

    def __panel__(self):
        form = pn.Column(self.problem, self.upload, self.gpu, self.forecaster, self.budget,
                         pn.pane.HTML("<b>Methods</b>"), self.methods, pn.Row(self.run_btn, self.cancel_btn),
                         width=360)
        help_text = pn.pane.Markdown(
            "Every method gets the same budget of GPU measurements and the same seed kernels. On a "
            "landscape every point was measured, so its **global best** is known: the dashed line. "
            "*Measurements saved*: the budget left once a method came within 2% of that best. The two "
            "orders measure the whole space without searching: best forecast first, or at random.",
            sizing_mode="stretch_width")
        return pn.Row(form, pn.Column(help_text, self.status, self.chart, self.table, sizing_mode="stretch_width"),
                      sizing_mode="stretch_width")
