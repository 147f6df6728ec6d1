"""Search view: pick a problem, a GPU (or a replay of one), a forecaster, a method and a budget;
start, pause, resume; watch best speedup against GPU measurements and the candidates table
(each measured candidate's speedup over eager PyTorch and over torch.compile)."""
from __future__ import annotations

import pandas as pd
import panel as pn
import param
from bokeh.models import ColumnDataSource, NumberFormatter
from bokeh.plotting import figure

from workbench.compose import executor_from_env
from workbench.errors import ConfigError, WorkbenchError
from workbench.search.events import (FailedGenerationEvent, Finished, Forecasted, Generated, Measured, Trusted,
                                     decode_all)
from workbench.search.loop import best_curve
from workbench.spec import Target, TargetError
from workbench.ui.dataset_view import TITLES
from workbench.ui.llm_settings import LLMSettingsPanel
from workbench.ui.runner import SearchRunner, candidate_rows
from workbench.ui.search_form import SearchForm
from workbench.ui.safe import code, esc
from workbench.ui.sources import set_data

NO_DATA = ("<p><b>No recorded measurements and no GPU.</b> Load the shipped data "
           "(<code>workbench dataset load-shipped</code>, or restart the app on an empty database) "
           "to replay searches.</p>")

COLUMNS = ["candidate", "status", "forecast_bin", "confidence", "speedup", "over_compile", "decision", "origin"]


def problem_options(store) -> dict[str, str]:
    """Label -> problem id; labels carry level and tags so typing any of them finds the problem."""
    return {f"{p.id} · level {p.level} · {', '.join(p.tags)}" if p.tags else f"{p.id} · level {p.level}": p.id
            for p in store.problems()}


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
    if executor_from_env()[0] == "ray":  # measurements run on the cluster's GPUs, not this machine's
        opts["GPUs of the Ray cluster (live, $WORKBENCH_RAY_ADDRESS)"] = "cuda"
    return opts


def _replay_key(gpu) -> str | None:
    """The recorded GPU type a replay target string answers from; None for a live or unknown one."""
    try:
        target = Target.parse(str(gpu))
    except TargetError:
        return None
    return target.key if target.replay else None


def llm_line(events: list) -> str:
    """A status paragraph on the language model's work in a search ("" when none was used):
    model-written children and forecasts with their tokens and seconds, and failed generations
    with the last reason (escaped: it quotes the server and the answer)."""
    tokens = seconds = 0.0
    written = forecasts = 0
    failed, last = 0, ""
    for e in decode_all(events):
        if isinstance(e, Generated) and e.generation:
            g = e.generation
            share = max(1, int(g.get("shared_by", 1) or 1))
            written += 1
            tokens += (g.get("prompt_tokens", 0) + g.get("completion_tokens", 0)) / share
            seconds += float(g.get("seconds", 0.0)) / share
        elif isinstance(e, Forecasted) and (e.forecast.completion_tokens or e.forecast.seconds):
            f = e.forecast
            forecasts += 1
            tokens += f.prompt_tokens + f.completion_tokens
            seconds += float(f.seconds)
        elif isinstance(e, FailedGenerationEvent):
            failed += 1
            last = e.reason
    if not (written or forecasts or failed):
        return ""
    text = (f"<p>language model: {written} children written, {forecasts} forecasts, "
            f"{int(tokens)} tokens, {seconds:.1f} s of model time")
    if failed:
        text += f"; {failed} failed generations (last: {esc(last[:300])})"
    return text + "</p>"


class SearchView(pn.viewable.Viewer):
    """Controls of the shared runner plus a live chart and table of its current search.

    `refresh()` is cheap when nothing changed (one `store.version()` query); the app calls it
    from a periodic callback. Clicking a row sets `selected_candidate` / `selected_gpu`.
    """

    selected_candidate = param.String(default="")
    selected_gpu = param.String(default="")
    selected_search = param.String(default="", doc="the search the clicked row belongs to")
    selected_replay = param.Boolean(default=False, doc="that search replays recorded measurements")

    def __init__(self, store, runner: SearchRunner, **params):
        super().__init__(**params)
        self._store, self._runner = store, runner
        probs = problem_options(store)
        gpus = gpu_options(store)
        # The form's parameters (choices and defaults from the registry) and their widgets.
        self.form = SearchForm(gpus=gpus, problem=next(iter(probs.values()), ""))
        w = self.form.widgets(probs)
        self.problem, self.gpu, self.forecaster = w["problem"], w["gpu"], w["forecaster"]
        self.generator, self.method, self.budget = w["generator"], w["method"], w["budget"]
        self.llm = LLMSettingsPanel()
        self.local = self.form.local_card()
        self.start_btn = pn.widgets.Button(label="Start", button_type="primary", css_classes=["wb-start"])
        self.pause_btn = pn.widgets.Button(label="Pause")
        self.resume_btn = pn.widgets.Button(label="Resume")
        self.stop_btn = pn.widgets.Button(label="Stop", button_type="danger")
        self.start_btn.on_click(self._start)
        self.pause_btn.on_click(lambda e: self._control(self._runner.pause))
        self.resume_btn.on_click(lambda e: self._control(self._runner.resume))
        self.stop_btn.on_click(lambda e: self._control(self._runner.stop))
        # HTML, every stored string escaped: reasons and errors quote candidates and imported files.
        self.status = pn.pane.HTML("", css_classes=["wb-search-status"], sizing_mode="stretch_width")
        self._curve = ColumnDataSource(data=dict(x=[], y=[]))
        fig = figure(title="Best measured speedup vs GPU measurements", x_axis_label="GPU measurements",
                     y_axis_label="best speedup (x)", height=260, sizing_mode="stretch_width")
        fig.step("x", "y", source=self._curve, mode="after", line_width=2)
        fig.scatter("x", "y", source=self._curve, size=6)
        self.chart = pn.pane.Bokeh(fig)
        self.table = pn.widgets.Tabulator(pd.DataFrame(columns=COLUMNS), disabled=True, show_index=False,
                                          formatters={"speedup": NumberFormatter(format="0.000", nan_format="-"),
                                                      "over_compile": NumberFormatter(format="0.000", nan_format="-"),
                                                      "confidence": NumberFormatter(format="0.000", nan_format="-")},
                                          titles=dict(TITLES),
                                          sizing_mode="stretch_width", height=330, css_classes=["wb-candidates"])
        self.table.on_click(self._on_click)
        self._seen = (-1, "")
        self._message = ""
        if not gpus:
            self.status.object = NO_DATA
            self.start_btn.disabled = True

    def chosen_problem(self) -> str:
        """The problem id to search: the text typed in the problem box when it names a problem
        (a label of the list or an id), the picked value when nothing was typed. Typed text that
        names no problem raises ConfigError (the box keeps its previous value then, and a search
        of that previous problem is not what the user asked for)."""
        typed = (self.problem.value_input or "").strip()
        if not typed:
            return self.problem.value
        options = self.problem.options
        if typed in options:
            return options[typed]
        if typed in options.values():
            return typed
        raise ConfigError(f"unknown problem {typed!r}: pick one from the list (type part of a name, "
                          "a level or a tag, then choose)")

    def _start(self, event=None) -> None:
        try:
            self._runner.start_spec(self.form.spec(self.chosen_problem()), llm=self.llm.settings(),
                                    gpu=self.form.gpu)
            self._message = ""
        except WorkbenchError as e:  # a bad choice is shown, not raised into the server
            self._message = f"<p><b>cannot start:</b> {esc(e)}</p>"
        self.refresh(force=True)

    def _control(self, action) -> None:
        action()
        self.refresh(force=True)

    def refresh(self, force: bool = False) -> None:
        """Redraw from the store when its version or the runner's phase moved (cheap poll)."""
        seen = (self._store.version(), self._runner.phase, self._runner.message)
        if seen == self._seen and not force:
            return
        self._seen = seen
        if self._message:
            self.status.object = self._message
            self._message = ""
            return
        sid = self._runner.search_id
        phase = self._runner.phase
        cfg = self._runner.config
        replay = "REPLAY" if _replay_key(cfg.get("gpu", self.gpu.value)) else "LIVE"
        if not sid:
            if phase == "preparing":
                self.status.object = (f"<p>preparing a {replay} search of {code(cfg.get('problem'))}: "
                                      f"{esc(self._runner.message or 'building the search...')}</p>")
            elif phase == "failed":
                self.status.object = f"<p><b>search failed:</b> {esc(self._runner.error)}</p>"
            return
        events = decode_all(self._store.events(sid))
        rows = candidate_rows(events)
        self.table.value = pd.DataFrame(rows, columns=COLUMNS)
        curve = best_curve(events)
        set_data(self._curve, dict(x=[c[0] for c in curve], y=[c[1] for c in curve]))
        measured = sum(isinstance(e, Measured) for e in events)
        trusted = sum(isinstance(e, Trusted) for e in events)
        best = f", best {curve[-1][1]:.3f}x" if curve else ", no correct kernel yet"
        ends = [e.reason for e in events if isinstance(e, Finished)]
        if ends and ends[-1]:
            best += f" (ended: {esc(ends[-1])})"
        text = (f"<p>search {code(sid)} of {code(cfg.get('problem'))} ({replay}, {esc(phase)}): "
                f"{len(rows)} candidates considered, {measured} / {esc(cfg.get('budget'))} "
                f"GPU measurements, {trusted} trusted forecasts{best}</p>")
        text += llm_line(events)
        if self._runner.error:
            text += f"<p><b>error:</b> {esc(self._runner.error)}</p>"
        self.status.object = text

    def _on_click(self, event) -> None:
        row = self.table.value.iloc[event.row]
        gpu = str(self._runner.config.get("gpu", self.gpu.value))
        key = _replay_key(gpu)
        self.selected_replay = key is not None
        self.selected_search = self._runner.search_id or ""
        # A live run's GPU type (h100) keys its measurements, not the device name (cuda:0).
        self.selected_gpu = key if key is not None else (self._runner.hardware_key or gpu)
        cid = str(row["candidate"])
        if cid == self.selected_candidate:
            self.param.trigger("selected_candidate")  # reopen the same candidate
        else:
            self.selected_candidate = cid

    def __panel__(self):
        controls = pn.Column(self.problem, self.gpu, self.forecaster, self.generator, self.method, self.budget,
                             pn.Row(self.start_btn, self.pause_btn), pn.Row(self.resume_btn, self.stop_btn),
                             self.local, self.llm, width=340)
        return pn.Row(controls, pn.Column(self.status, self.chart, self.table, sizing_mode="stretch_width"),
                      sizing_mode="stretch_width")
