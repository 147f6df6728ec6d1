"""Candidate inspector: side-by-side diff against the parent, the forecaster's reasoning,
the forecast distribution against the measured bin, timing details, logs and lineage.

What it shows is always about one measurement: the candidate on one GPU type. The forecast drawn
is the forecast for that GPU type (labelled; none is drawn when only other GPUs have one), the log
is that candidate's own part of the recorded log, and a line says where the numbers come from:
measured in the search being watched, replayed in it from recorded data, or recorded (in the
database, not measured by that search). In a search, the generator's answer (an LLM's raw text)
and the forecaster's reasoning, with tokens and seconds, are shown literally (escaped)."""
from __future__ import annotations

import difflib
import html
import re
from typing import Mapping, Sequence

import panel as pn
import param
from bokeh.models import ColumnDataSource
from bokeh.plotting import figure

from workbench import bins
from workbench.dataset.baselines import CompileBaseline, shipped_compile_baselines, speedup_over_compile
from workbench.records import Candidate, Forecast, Measurement
from workbench.search.events import Forecasted, Generated, Measured, Trusted, decode_all
from workbench.ui.safe import code, esc, pre
from workbench.ui.sources import bokeh_edits, set_data

#: Baselines keyed by (problem_id, hardware_key), as `load_compile_baselines` gives them.
Baselines = Mapping[tuple[str, str], CompileBaseline]


def side_by_side_diff(parent_source: str | None, source: str, parent_label: str = "parent",
                      label: str = "candidate") -> str:
    """An HTML side-by-side diff with changed lines highlighted (no external assets).

    Source lines and labels are escaped: the browser shows them literally."""
    if parent_source is None:
        body = html.escape(source)
        return (f"<div class='wb-diff'><p>{esc(label)}: <i>no parent, a seed candidate</i></p>"
                f"<pre>{body}</pre></div>")
    table = difflib.HtmlDiff(wrapcolumn=80).make_table(
        parent_source.splitlines(), source.splitlines(), esc(parent_label), esc(label),
        context=True, numlines=3)  # HtmlDiff escapes the lines itself, never the labels
    style = ("<style>.wb-diff table{font-family:monospace;font-size:12px;border-collapse:collapse}"
             ".wb-diff .diff_add{background:#d4f8d4}.wb-diff .diff_chg{background:#fff3b0}"
             ".wb-diff .diff_sub{background:#fbd0d0}.wb-diff td{padding:0 4px}</style>")
    return f"{style}<div class='wb-diff'>{table}</div>"


def lineage(candidate: Candidate, lookup) -> list[Candidate]:
    """Ancestors of `candidate`, nearest first (`lookup(id) -> Candidate | None`)."""
    chain, seen = [], {candidate.id}
    cur = candidate
    while cur.parent_id and cur.parent_id not in seen:
        parent = lookup(cur.parent_id)
        if parent is None:
            break
        chain.append(parent)
        seen.add(parent.id)
        cur = parent
    return chain


def compile_line(m: Measurement, baselines: Baselines) -> str:
    """The HTML line comparing an ok measurement with torch.compile on its problem and GPU."""
    b = baselines.get((m.problem_id, m.hardware_key))
    if b is None:
        return (f"<b>over torch.compile</b> no torch.compile baseline was measured for "
                f"{esc(m.problem_id)} on {esc(m.hardware_key)}")
    return (f"<b>over torch.compile</b> {speedup_over_compile(m.speedup, b):.3f}x (torch.compile: "
            f"{b.speedup_over_eager:.3f}x over eager, {b.compiled_ms:.4f} ms compiled, mode {esc(b.mode)})")


def measurement_html(m: Measurement | None, baselines: Baselines | None = None) -> str:
    """Status, speedup (over eager and over torch.compile), times and dates of a measurement, as
    HTML lines (`<br>` between them) in which every stored string is escaped.

    `baselines`: torch.compile baselines keyed by (problem_id, hardware_key); None uses the
    shipped ones (read once)."""
    if m is None:
        return "<b>not measured</b> (trusted forecast or still queued)"
    out = [f"<b>status</b> {code(m.status.value)} on <b>{esc(m.hardware_key.upper())}</b>"]
    if m.reason:
        out.append(f"<b>reason</b> <span class='wb-reason'>{esc(m.reason)}</span>")
    if m.ok:
        out.append(f"<b>speedup</b> {m.speedup:.3f}x (bin {bins.bin_number(m.speedup)}: "
                   f"{esc(bins.label(bins.bin_of(m.speedup)))})")
        out.append(compile_line(m, shipped_compile_baselines() if baselines is None else baselines))
        out.append(f"<b>reference</b> {m.reference_ms:.4f} ms [{m.reference_ci_low_ms:.4f}, "
                   f"{m.reference_ci_high_ms:.4f}] over {m.reference_runs} runs")
        out.append(f"<b>candidate</b> {m.candidate_ms:.4f} ms [{m.candidate_ci_low_ms:.4f}, "
                   f"{m.candidate_ci_high_ms:.4f}] over {m.candidate_runs} runs")
    if m.compile_s is not None:
        out.append(f"<b>compile + check</b> {m.compile_s:.1f} s")
    out.append(f"<b>measured at</b> {esc(m.measured_at)}")
    return "<br>".join(out)


#: The line the executor's worker prints before each job; a worker's log holds several jobs.
_LOG_HEADER = re.compile(r"^=== candidate (\S+) ===[ \t]*$", re.M)


def own_log(log: str, candidate_id: str) -> tuple[str, bool]:
    """The parts of a recorded `log` that belong to `candidate_id`, and whether parts that belong
    to other candidates were left out.

    A worker measures several candidates in a row and heads each job's output with
    `=== candidate ID ===`; recordings made by older executors attached a neighbour's section to a
    measurement. Kept: text before any header, and every section under this candidate's header."""
    heads = list(_LOG_HEADER.finditer(log or ""))
    if not heads:
        return log or "", False
    parts = [log[: heads[0].start()]] if log[: heads[0].start()].strip() else []
    foreign = False
    for i, h in enumerate(heads):
        body = log[h.start(): heads[i + 1].start() if i + 1 < len(heads) else len(log)]
        if h.group(1) == candidate_id:
            parts.append(body)
        else:
            foreign = True
    return "".join(parts), foreign


def log_html(m: Measurement | None, max_chars: int = 4000) -> str:
    """The measurement's own log (tail), escaped, under one note that says what is shown: this
    candidate's part only (other candidates' output recorded with it left out), nothing because
    the recorded log held only other candidates' output, nothing because none was recorded, or
    nothing because the candidate was not measured on this GPU type."""
    if m is None:
        return ("<p class='wb-log-note'><i>Not measured on this GPU type, so there is no compile or run "
                "log.</i></p>")
    text, foreign = own_log(m.log or "", m.candidate_id)
    if not text.strip():
        why = ("the recorded log holds only other candidates' output (the worker measured them in a row), "
               "none of it this candidate's" if foreign else "no log of this candidate was recorded")
        return f"<p class='wb-log-note'><i>Nothing to show: {why}.</i></p>"
    note = ("<p class='wb-log-note'><i>Only this candidate's part of the recorded log is shown; other "
            "candidates' output, recorded with it (the worker measured them in a row), is left out.</i></p>"
            if foreign else "")
    return note + pre(text[-max_chars:], "wb-log-text")


def provenance_html(m: Measurement | None, in_run: str, search_id: str = "") -> str:
    """Where the numbers come from. `in_run`: "measured" (this search measured it on a GPU),
    "replayed" (this search answered it from recorded data), "trusted" (this search trusted its
    forecast instead), "considered" (generated, not measured by this search), or "" (no search:
    opened from the dataset)."""
    gpu = esc(m.hardware_key.upper()) if m is not None else ""
    when = f" at {esc(m.measured_at)}" if m is not None else ""
    sid = f" {code(search_id)}" if search_id else ""
    if in_run == "measured" and m is not None:
        text = f"<b>measured in this run</b> (search{sid}) on {gpu}{when}"
    elif in_run == "replayed" and m is not None:
        text = (f"<b>recorded</b> on {gpu}{when}, replayed in this run (search{sid}): no GPU ran it now")
    elif m is None:
        what = "its forecast was trusted instead" if in_run == "trusted" else "not measured"
        text = f"<b>not measured</b> on this GPU type: {what}"
    else:
        why = {"trusted": "its forecast was trusted, it was not measured by this search",
               "considered": "this search did not measure it"}.get(in_run, "")
        text = f"<b>recorded</b> on {gpu}{when} (from the database" + (f"; {why}" if why else "") + ")"
    return f"<p class='wb-provenance'>{text}</p>"


def cost_text(prompt_tokens: int, completion_tokens: int, seconds: float) -> str:
    return f"{int(prompt_tokens)} prompt + {int(completion_tokens)} completion tokens, {float(seconds):.1f} s"


def reasoning_html(f: Forecast | None, hardware_key: str = "", others: Sequence[str] = ()) -> str:
    """The forecaster's name, GPU and numbers, then its reasoning shown literally (a model wrote
    it). With no forecast, `others` names the GPU types that have one."""
    if f is None:
        where = f" for {esc(hardware_key.upper())}" if hardware_key else ""
        also = (f" (forecasts exist for {', '.join(esc(k.upper()) for k in sorted(set(others)))})"
                if others else "")
        return f"<p><b>No forecast</b>{where} for this candidate{also}.</p>"
    cost = f", {cost_text(f.prompt_tokens, f.completion_tokens, f.seconds)}" if f.seconds or f.completion_tokens else ""
    if f.abstained:  # no distribution was given: no bin and no confidence, as the table shows it
        head = (f"<p><b>Forecaster</b> {code(f.forecaster)} for <b>{esc(f.hardware_key.upper())}</b> "
                f"(<b>abstained</b>: no forecast bin and no confidence; the search measures such a "
                f"candidate rather than trust it{cost})</p>")
        return head + pre(f.reasoning or "(no reason given)", "wb-reasoning-text")
    head = (f"<p><b>Forecaster</b> {code(f.forecaster)} for <b>{esc(f.hardware_key.upper())}</b> "
            f"({esc(f.parse_status.value)}, sum of the probabilities it gave before normalising "
            f"{f.raw_sum:.2f}, confidence {f.confidence:.3f}{cost})</p>")
    return head + pre(f.reasoning or "(no reasoning given)", "wb-reasoning-text")


def generation_html(info: Mapping | None) -> str:
    """The generator's record of how the candidate was written (an LLM's raw answer, tokens,
    seconds), from the search's `generated` event; "" when there is none."""
    if not info:
        return ""
    cost = cost_text(info.get("prompt_tokens", 0), info.get("completion_tokens", 0), info.get("seconds", 0.0))
    shared = int(info.get("shared_by", 1) or 1)
    if shared > 1:
        cost += f" for one call that wrote {shared} children"
    edits = f"; edits chosen: {esc(', '.join(info['edits']))}" if info.get("edits") else ""
    return (f"<p><b>Generator answer</b> (model {code(info.get('model', ''))}, {cost}{edits})</p>"
            + pre(info.get("answer", "") or "(empty answer)", "wb-generation-text"))


def lineage_html(c: Candidate, chain: Sequence[Candidate]) -> str:
    """`c`'s id, then its ancestors' ids and origins, nearest first."""
    if not chain:
        return "<p><b>lineage</b> seed (no parent)</p>"
    parts = [code(c.id)] + [f"{code(a.id)} ({esc(a.origin)})" for a in chain]
    return "<p><b>lineage</b> " + " &larr; ".join(parts) + "</p>"


def title_html(c: Candidate) -> str:
    return (f"<h3>Candidate {code(c.id)}</h3><p>{esc(c.problem_id)} &middot; backend {esc(c.backend)} "
            f"&middot; generation {int(c.generation)} &middot; origin {code(c.origin)}</p>")


def run_facts(events: Sequence, candidate_id: str) -> dict:
    """What a search's events say about one candidate: "in_run" ("measured", "replayed" is
    decided by the caller, "trusted", "considered" or "" when the search never generated it),
    the run's "forecast" dict and "measurement" dict if any, and the "generation" record."""
    out: dict = {"in_run": "", "forecast": None, "measurement": None, "generation": None}
    for e in decode_all(events):
        if isinstance(e, Generated) and e.candidate.id == candidate_id:
            out["in_run"] = out["in_run"] or "considered"
            out["generation"] = dict(e.generation) if e.generation is not None else None
        elif isinstance(e, Forecasted) and e.forecast.candidate_id == candidate_id:
            out["forecast"] = e.forecast.to_dict()
        elif isinstance(e, Trusted) and e.candidate_id == candidate_id and out["in_run"] != "measured":
            out["in_run"] = "trusted"
        elif isinstance(e, Measured) and e.measurement.candidate_id == candidate_id:
            out["in_run"], out["measurement"] = "measured", e.measurement.to_dict()
    return out


class CandidateInspector(pn.viewable.Viewer):
    """Shows one candidate's measurement on one GPU type. Call `show(candidate, gpu, search_id,
    replay)` (or set the parameters); data come from `store`; `baselines` are the torch.compile
    baselines (None: the shipped ones). With a `search_id`, the Inspector says whether that
    search measured the candidate (or replayed it: `replay`) and shows the run's own forecast
    and the generator's answer."""

    candidate_id = param.String(default="", doc="candidate to show")
    hardware_key = param.String(default="", doc="GPU type whose measurement and forecast to show")
    search_id = param.String(default="", doc="search the candidate was opened from ('' : the dataset)")
    replay = param.Boolean(default=False, doc="that search answered from recorded measurements")

    def __init__(self, store, baselines: Baselines | None = None, **params):
        super().__init__(**params)
        self._store = store
        self._baselines = baselines
        # Every pane that shows stored text is an HTML pane fed by the escaping helpers of
        # workbench.ui.safe: candidates and models write that text (never Markdown: it fetches URLs).
        self.title = pn.pane.HTML("<h3>Candidate inspector</h3><p>Click a candidate in a table.</p>",
                                  sizing_mode="stretch_width")
        self.provenance = pn.pane.HTML("", css_classes=["wb-provenance-pane"], sizing_mode="stretch_width")
        self.diff = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=["wb-diff-pane"])
        self.reasoning = pn.pane.HTML("", css_classes=["wb-reasoning"], sizing_mode="stretch_width")
        self.generation = pn.pane.HTML("", css_classes=["wb-generation"], sizing_mode="stretch_width")
        self.details = pn.pane.HTML("", css_classes=["wb-details"], sizing_mode="stretch_width")
        self.log = pn.pane.HTML("", css_classes=["wb-log"], sizing_mode="stretch_width")
        self.lineage = pn.pane.HTML("", css_classes=["wb-lineage"], sizing_mode="stretch_width")
        self._dist = ColumnDataSource(data=dict(x=[], p=[], color=[]))
        self._fig = figure(title="Forecast over bins (red: measured bin)", x_range=list(bins.LABELS),
                           height=220, width=460, toolbar_location=None)
        self._fig.vbar(x="x", top="p", width=0.8, color="color", source=self._dist)
        self._fig.xaxis.major_label_orientation = 0.7
        self.dist_pane = pn.pane.Bokeh(self._fig)
        self.chart_label = pn.pane.HTML("", css_classes=["wb-chart-label"])
        self._update()

    def show(self, candidate_id: str, hardware_key: str, search_id: str = "", replay: bool = False) -> None:
        """Show `candidate_id` on `hardware_key`, opened from `search_id` (or the dataset): one redraw."""
        with param.parameterized.discard_events(self):
            self.param.update(candidate_id=candidate_id, hardware_key=hardware_key,
                              search_id=search_id, replay=bool(replay))
        self._update()

    def _forecast_for(self, c: Candidate, facts: dict) -> tuple[Forecast | None, list[str]]:
        """The forecast for this GPU type (the run's own first), and the GPU types that have one."""
        if facts.get("forecast") and facts["forecast"].get("hardware_key") == self.hardware_key:
            return Forecast.from_dict(facts["forecast"]), []
        forecasts: Sequence[Forecast] = self._store.forecasts(candidate_ids=[c.id])
        mine = [x for x in forecasts if x.hardware_key == self.hardware_key]
        if mine:
            return max(mine, key=lambda x: x.created_at), []
        return None, [x.hardware_key for x in forecasts]

    @param.depends("candidate_id", "hardware_key", "search_id", "replay", watch=True)
    def _update(self) -> None:
        if not self.candidate_id:
            return
        c = self._store.get_candidate(self.candidate_id)
        if c is None:
            self.title.object = f"<h3>Candidate {code(self.candidate_id)} not found</h3>"
            return
        parent = self._store.get_candidate(c.parent_id) if c.parent_id else None
        facts = run_facts(self._store.events(self.search_id), c.id) if self.search_id else {}
        m = self._store.get_measurement(c.id, self.hardware_key) if self.hardware_key else None
        in_run = facts.get("in_run", "")
        if in_run == "measured" and facts.get("measurement"):
            m = Measurement.from_dict(facts["measurement"])
            in_run = "replayed" if self.replay else "measured"
        f, others = self._forecast_for(c, facts)
        self.title.object = title_html(c)
        self.provenance.object = provenance_html(m, in_run, self.search_id)
        self.diff.object = side_by_side_diff(parent.source if parent else None, c.source,
                                             parent_label=f"parent {parent.id}" if parent else "",
                                             label=f"candidate {c.id}")
        self.reasoning.object = reasoning_html(f, self.hardware_key, others)
        self.generation.object = generation_html(facts.get("generation"))
        gpu = self.hardware_key.upper() or "?"
        if f is None or f.abstained:
            set_data(self._dist, dict(x=[], p=[], color=[]))
            self.chart_label.object = (f"<p><b>No forecast for {esc(gpu)}</b>: nothing is drawn.</p>" if f is None
                                       else f"<p><b>The forecast for {esc(gpu)} abstained</b>: no distribution "
                                       "to draw.</p>")
        else:
            true_bin = m.bin if m is not None and m.ok else None
            set_data(self._dist, dict(x=list(bins.LABELS), p=list(f.probabilities),
                                      color=["#d62728" if i == true_bin else "#1f77b4"
                                             for i in range(bins.N_BINS)]))
            self.chart_label.object = (f"<p>Forecast for <b>{esc(gpu)}</b> by {code(f.forecaster)}; red: the bin "
                                       f"measured on {esc(gpu)}</p>")
        with bokeh_edits():
            self._fig.title.text = f"Forecast for {gpu} over bins (red: measured bin)"
        self.details.object = measurement_html(m, self._baselines)
        self.log.object = log_html(m)
        self.lineage.object = lineage_html(c, lineage(c, self._store.get_candidate))

    def __panel__(self):
        return pn.Column(self.title, self.provenance, self.lineage,
                         pn.Row(pn.Column(self.chart_label, self.dist_pane),
                                pn.Column(self.details, self.reasoning)),
                         self.generation,
                         pn.pane.Markdown("#### Source diff against the parent"), self.diff,
                         pn.pane.Markdown("#### Compile and run log"), self.log,
                         sizing_mode="stretch_width")
