"""Search view: pick a problem, a GPU (or a replay of one), a forecaster, a method and a budget;
start, pause, resume, stop; watch best speedup against GPU measurements and the candidates table
(each measured candidate's speedup over eager PyTorch and over torch.compile).

What the view shows is always one search, named in the status line: the runner's current one,
or a past search reopened from the Searches tab (`show_search`). While a new search prepares,
the chart and table are empty (never the previous search's rows), and a click on a row opens the
candidate of the search the table shows, on that search's GPU.
"""
from __future__ import annotations

import pandas as pd
import panel as pn
import param
from bokeh.models import ColumnDataSource, NumberFormatter
from bokeh.plotting import figure

from workbench.compose import executor_from_env
from workbench.errors import ConfigError, WorkbenchError
from workbench.search.events import (FailedGenerationEvent, Finished, Forecasted, Generated, Measured, Trusted,
                                     Unmeasurable, decode_all)
from workbench.search.loop import best_curve
from workbench.spec import Target, TargetError
from workbench.ui.dataset_view import TITLES
from workbench.ui.explain import failed_generations_html, trust_note
from workbench.ui.llm_settings import LLMSettingsPanel
from workbench.ui.runner import SearchRunner, candidate_rows
from workbench.ui.search_form import SearchForm, parse_budget
from workbench.ui.safe import code, esc
from workbench.ui.sources import set_data

NO_DATA = ("<p><b>No recorded measurements and no GPU.</b> Load the shipped data "
           "(<code>workbench dataset load-shipped</code>, or restart the app on an empty database) "
           "to replay searches.</p>")
EMPTY_PROBLEM = ("the Problem box is empty: type part of a problem's name, level or tag and pick it from "
                 "the list")

COLUMNS = ["candidate", "status", "forecast_bin", "confidence", "speedup", "over_compile", "decision", "origin"]
#: Phases in which the search's thread is still at work (the Stop button acts on them).
ACTIVE = ("preparing", "running", "pausing", "stopping")


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


def stored_replay(info: dict) -> bool:
    """Whether a stored search (`Store.get_search`) replayed recorded measurements (its spec's
    target; a search stored before specs were counts as live)."""
    target = (info.get("spec") or {}).get("target")
    return isinstance(target, dict) and target.get("kind") == "replay"


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
        text += f"; {failed} failed generations (last: {esc(last[:300])}; their answers are below the table)"
    return text + "</p>"


def curve_data(events: list) -> tuple[dict, dict]:
    """(the step line, its markers): the best measured speedup after each improvement, the line
    carried on to the GPU measurements spent so the x-axis spans all of them."""
    curve = best_curve(events)
    spent = sum(isinstance(e, Measured) for e in decode_all(events))
    xs, ys = [c[0] for c in curve], [c[1] for c in curve]
    line = dict(x=list(xs), y=list(ys))
    if curve and spent > xs[-1]:
        line["x"].append(spent)
        line["y"].append(ys[-1])
    return line, dict(x=xs, y=ys)


class SearchView(pn.viewable.Viewer):
    """Controls of the shared runner plus a live chart and table of one search.

    `refresh()` is cheap when nothing changed (one `store.version()` query); the app calls it
    from a periodic callback. Clicking a row sets `selected_candidate` / `selected_gpu` /
    `selected_search` / `selected_replay` from the search the table shows.
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
        # Which of the problem box's two values the user touched last: the typed text or the pick.
        self._edits = {"value": 0, "value_input": 0}
        self.problem.param.watch(self._note_edit, ["value", "value_input"])
        self.llm = LLMSettingsPanel()
        self.local = self.form.local_card()
        self.start_btn = pn.widgets.Button(label="Start", button_type="primary", css_classes=["wb-start"])
        self.pause_btn = pn.widgets.Button(label="Pause", css_classes=["wb-pause"])
        self.resume_btn = pn.widgets.Button(label="Resume", css_classes=["wb-resume"])
        self.stop_btn = pn.widgets.Button(label="Stop", button_type="danger", css_classes=["wb-stop"])
        self.start_btn.on_click(self._start)
        self.pause_btn.on_click(lambda e: self._control(self._runner.pause))
        self.resume_btn.on_click(lambda e: self._control(self._runner.resume))
        self.stop_btn.on_click(lambda e: self._control(self._runner.stop))
        # HTML, every stored string escaped: reasons and errors quote candidates and imported files.
        self.status = pn.pane.HTML("", css_classes=["wb-search-status"], sizing_mode="stretch_width")
        self.trust = pn.pane.HTML("", css_classes=["wb-trust"], sizing_mode="stretch_width")
        self.stage = pn.pane.HTML("", css_classes=["wb-stage"], sizing_mode="stretch_width")
        self.failed = pn.pane.HTML("", css_classes=["wb-failed"], sizing_mode="stretch_width")
        self._curve = ColumnDataSource(data=dict(x=[], y=[]))
        self._marks = ColumnDataSource(data=dict(x=[], y=[]))
        fig = figure(title="Best measured speedup vs GPU measurements", x_axis_label="GPU measurements",
                     y_axis_label="best speedup (x)", height=260, sizing_mode="stretch_width")
        fig.step("x", "y", source=self._curve, mode="after", line_width=2)
        fig.scatter("x", "y", source=self._marks, size=6)
        self.chart = pn.pane.Bokeh(fig)
        self.table = pn.widgets.Tabulator(pd.DataFrame(columns=COLUMNS), disabled=True, show_index=False,
                                          formatters={"speedup": NumberFormatter(format="0.000", nan_format="-"),
                                                      "over_compile": NumberFormatter(format="0.000", nan_format="-"),
                                                      "confidence": NumberFormatter(format="0.000", nan_format="-")},
                                          titles=dict(TITLES),
                                          sizing_mode="stretch_width", height=330, css_classes=["wb-candidates"])
        self.table.on_click(self._on_click)
        self._seen: tuple = ()
        self._message = ""
        self._viewing = ""  # a past search reopened from the Searches tab ("" : the runner's)
        self._shown: dict = {"search": "", "gpu": "", "replay": False}  # what the table holds
        if not gpus:
            self.status.object = NO_DATA
            self.start_btn.disabled = True

    # ------------------------------------------------------------------ the form
    def _note_edit(self, event) -> None:
        self._edits[event.name] = max(self._edits.values()) + 1

    def chosen_problem(self) -> str:
        """The problem id to search. When the user last picked from the list, the pick (whatever
        fragment was typed to find it). When they last typed (a pick of the problem already
        chosen changes nothing the server hears, so it also reads as typing): a label of the list
        or an id; else the chosen problem when its label holds the typed text (as the list
        filters); else the one problem whose label holds it. An empty box raises ConfigError, as
        does typed text that names no problem, or several: the box then keeps an older value,
        and a search of that older problem is not what the user asked for."""
        typed = (self.problem.value_input or "").strip()
        if self._edits["value_input"] <= self._edits["value"]:
            if not self.problem.value:
                raise ConfigError(EMPTY_PROBLEM)
            return self.problem.value
        if not typed:
            raise ConfigError(EMPTY_PROBLEM)
        options = self.problem.options
        if typed in options:
            return options[typed]
        if typed in options.values():
            return typed
        low = typed.lower()
        current = [label for label, pid in options.items() if pid == self.problem.value]
        if current and low in current[0].lower():
            return self.problem.value
        matches = [pid for label, pid in options.items() if low in label.lower()]
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise ConfigError(f"{typed!r} matches {len(matches)} problems ({', '.join(matches[:5])}"
                              f"{', ...' if len(matches) > 5 else ''}): pick one from the list")
        raise ConfigError(f"unknown problem {typed!r}: pick one from the list (type part of a name, "
                          "a level or a tag, then choose)")

    def _start(self, event=None) -> None:
        try:
            self.form.budget = parse_budget(self.budget.value)
            self._runner.start_spec(self.form.spec(self.chosen_problem()), llm=self.llm.settings(),
                                    gpu=self.form.gpu)
            self._message = ""
            self._viewing = ""
        except WorkbenchError as e:  # a bad choice is shown, not raised into the server
            self._message = f"<p><b>cannot start:</b> {esc(e)}</p>"
        self.refresh(force=True)

    def _control(self, action) -> None:
        self._viewing = ""
        action()
        self.refresh(force=True)

    def show_search(self, search_id: str) -> None:
        """Show a stored search (a past one) instead of the runner's; Start, Pause, Resume and
        Stop return to the runner's."""
        self._viewing = search_id
        self.refresh(force=True)

    # ------------------------------------------------------------------ drawing
    def _clear(self) -> None:
        """No search to show: an empty table and chart (never an older search's rows)."""
        self._shown = {"search": "", "gpu": "", "replay": False}
        if len(self.table.value):
            self.table.value = pd.DataFrame(columns=COLUMNS)
        set_data(self._curve, dict(x=[], y=[]))
        set_data(self._marks, dict(x=[], y=[]))
        self.trust.object = self.failed.object = ""

    def _target(self, sid: str) -> tuple[str, bool, str]:
        """(GPU key, replay?, problem id) of the search `sid` shows."""
        if not self._viewing:
            cfg = self._runner.config
            gpu = str(cfg.get("gpu", self.gpu.value))
            key = _replay_key(gpu)
            return (key if key is not None else (self._runner.hardware_key or gpu)), key is not None, \
                str(cfg.get("problem", ""))
        info = self._store.get_search(sid) or {}
        return str(info.get("hardware_key", "")), stored_replay(info), str(info.get("problem_id", ""))

    def refresh(self, force: bool = False) -> None:
        """Redraw from the store when its version, the runner's phase or message, or the search
        shown moved (cheap poll); the line saying what a running search is doing now (and for
        how long) is updated on every poll."""
        self._show_stage()
        seen = (self._store.version(), self._runner.phase, self._runner.message, self._runner.search_id,
                self._viewing)
        if seen == self._seen and not force:
            return
        self._seen = seen
        if self._message:
            self.status.object = self._message
            self._message = ""
            if not self._runner.search_id and not self._viewing:
                self._clear()
            return
        runner, phase = self._runner, self._runner.phase
        sid = self._viewing or runner.search_id
        if not sid:
            self._clear()
            replay = "REPLAY" if _replay_key(runner.config.get("gpu", self.gpu.value)) else "LIVE"
            problem = code(runner.config.get("problem"))
            if phase == "preparing":
                self.status.object = (f"<p>preparing a {replay} search of {problem}: "
                                      f"{esc(runner.message or 'building the search...')}</p>")
            elif phase == "stopping":
                self.status.object = f"<p><b>stopping</b> the {replay} search of {problem} being prepared...</p>"
            elif phase == "failed":
                self.status.object = f"<p><b>search failed:</b> {esc(runner.error)}</p>"
            elif phase == "stopped":
                self.status.object = f"<p>{esc(runner.message or 'stopped')}</p>"
            return
        gpu, replay, problem = self._target(sid)
        self._shown = {"search": sid, "gpu": gpu, "replay": replay}
        events = decode_all(self._store.events(sid))
        rows = candidate_rows(events)
        self.table.value = pd.DataFrame(rows, columns=COLUMNS)
        line, marks = curve_data(events)
        set_data(self._curve, line)
        set_data(self._marks, marks)
        measured = sum(isinstance(e, Measured) for e in events)
        trusted = sum(isinstance(e, Trusted) for e in events)
        unmeasurable = len({e.candidate_id for e in events if isinstance(e, Unmeasurable)})
        best = f", best {marks['y'][-1]:.3f}x" if marks["y"] else ", no correct kernel yet"
        ends = [e.reason for e in events if isinstance(e, Finished)]
        if ends and ends[-1]:
            best += f" (ended: {esc(ends[-1])})"
        if self._viewing:
            info = self._store.get_search(sid) or {}
            state, budget = esc(info.get("state", "")), esc(info.get("budget", ""))
            lead = f"<p>past search {code(sid)} of {code(problem)} ({'REPLAY' if replay else 'LIVE'}, {state}): "
        else:
            state = (f"<b>{esc(phase)}</b>" if phase in ("stopping", "pausing") else esc(phase))
            budget = esc(runner.config.get("budget"))
            lead = f"<p>search {code(sid)} of {code(problem)} ({'REPLAY' if replay else 'LIVE'}, {state}): "
        text = (lead + f"{len(rows)} candidates considered, {measured} / {budget} GPU measurements, "
                f"{trusted} trusted forecasts{best}</p>")
        if unmeasurable:
            text += (f"<p>{unmeasurable} candidate(s) the method chose have no recording on {esc(gpu.upper())}: "
                     "a replay cannot measure them, so they used no budget and nothing was stored.</p>")
        if not self._viewing and phase in ("stopping", "pausing"):
            text += f"<p><b>{esc(phase)}</b>: ending the step in progress...</p>"
        text += llm_line(events)
        if not self._viewing and runner.error:
            text += f"<p><b>error:</b> {esc(runner.error)}</p>"
        self.status.object = text
        run = runner.run if not self._viewing else None
        self.trust.object = trust_note(run) if run is not None and run.search_id == sid else ""
        self.failed.object = failed_generations_html(events)

    def _show_stage(self) -> None:
        import time

        r = self._runner
        text = ""
        if not self._viewing and r.phase == "running" and r.stage:
            text = (f"<p class='wb-stage-text'>now: {esc(r.stage)} ({time.monotonic() - r.stage_since:.0f} s); "
                    "Pause and Stop act at once</p>")
        if text != self.stage.object:
            self.stage.object = text

    def _on_click(self, event) -> None:
        if not self._shown["search"] or event.row is None or event.row >= len(self.table.value):
            return
        row = self.table.value.iloc[event.row]
        if getattr(event, "column", None) == "candidate" and event.value is not None \
                and str(event.value) != str(row["candidate"]):
            return  # the browser still showed an older table: open nothing rather than another row
        self.selected_replay = bool(self._shown["replay"])
        self.selected_search = self._shown["search"]
        # A live run's GPU type (h100) keys its measurements, not the device name (cuda:0).
        self.selected_gpu = self._shown["gpu"]
        cid = str(row["candidate"])
        if cid == self.selected_candidate:
            self.param.trigger("selected_candidate")  # reopen the same candidate
        else:
            self.selected_candidate = cid

    def __panel__(self):
        controls = pn.Column(self.problem, self.gpu, self.forecaster, self.generator, self.method, self.budget,
                             pn.Row(self.start_btn, self.pause_btn), pn.Row(self.resume_btn, self.stop_btn),
                             self.local, self.llm, width=340)
        return pn.Row(controls, pn.Column(self.status, self.stage, self.trust, self.chart, self.table, self.failed,
                                          sizing_mode="stretch_width"),
                      sizing_mode="stretch_width")
