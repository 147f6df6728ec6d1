"""Candidate inspector: side-by-side diff against the parent, the forecaster's reasoning,
the forecast distribution against the measured bin, timing details, logs and lineage."""
from __future__ import annotations

import difflib
import html
from typing import Mapping, Sequence

import panel as pn
import param
from bokeh.models import ColumnDataSource
from bokeh.plotting import figure

from workbench import bins
from workbench.dataset.baselines import CompileBaseline, shipped_compile_baselines, speedup_over_compile
from workbench.records import Candidate, Forecast, Measurement
from workbench.ui.safe import code, esc, pre
from workbench.ui.sources import set_data

#: Baselines keyed by (problem_id, hardware_key), as `load_compile_baselines` gives them.
Baselines = Mapping[tuple[str, str], CompileBaseline]


def side_by_side_diff(parent_source: str | None, source: str, parent_label: str = "parent",
                      label: str = "candidate") -> str:
    """An HTML side-by-side diff with changed lines highlighted (no external assets).

    Source lines and labels are escaped: the browser shows them literally."""
    if parent_source is None:
        body = html.escape(source)
        return f"<div class='wb-diff'><p><i>no parent: a seed candidate</i></p><pre>{body}</pre></div>"
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
    out = [f"<b>status</b> {code(m.status.value)} on <b>{esc(m.hardware_key)}</b>"]
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


def reasoning_html(f: Forecast | None) -> str:
    """The forecaster's name and numbers, then its reasoning shown literally (a model wrote it)."""
    if f is None:
        return "<p><b>No forecast</b> for this candidate.</p>"
    head = (f"<p><b>Forecaster</b> {code(f.forecaster)} ({esc(f.parse_status.value)}, "
            f"raw sum {f.raw_sum:.2f}, confidence {f.confidence:.2f})</p>")
    return head + pre(f.reasoning or "(no reasoning given)", "wb-reasoning-text")


def lineage_html(c: Candidate, chain: Sequence[Candidate]) -> str:
    """`c`'s id, then its ancestors' ids and origins, nearest first."""
    if not chain:
        return "<p><b>lineage</b> seed (no parent)</p>"
    parts = [code(c.id)] + [f"{code(a.id)} ({esc(a.origin)})" for a in chain]
    return "<p><b>lineage</b> " + " &larr; ".join(parts) + "</p>"


def title_html(c: Candidate) -> str:
    return (f"<h3>Candidate {code(c.id)}</h3><p>{esc(c.problem_id)} &middot; backend {esc(c.backend)} "
            f"&middot; generation {int(c.generation)} &middot; origin {code(c.origin)}</p>")


class CandidateInspector(pn.viewable.Viewer):
    """Shows one candidate. Set `candidate_id`; data come from `store`; `baselines` are the
    torch.compile baselines (None: the shipped ones)."""

    candidate_id = param.String(default="", doc="candidate to show")
    hardware_key = param.String(default="", doc="hardware whose measurement to show")

    def __init__(self, store, baselines: Baselines | None = None, **params):
        super().__init__(**params)
        self._store = store
        self._baselines = baselines
        # Every pane that shows stored text is an HTML pane fed by the escaping helpers of
        # workbench.ui.safe: candidates and models write that text (never Markdown: it fetches URLs).
        self.title = pn.pane.HTML("<h3>Candidate inspector</h3><p>Click a candidate in a table.</p>",
                                  sizing_mode="stretch_width")
        self.diff = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=["wb-diff-pane"])
        self.reasoning = pn.pane.HTML("", css_classes=["wb-reasoning"], sizing_mode="stretch_width")
        self.details = pn.pane.HTML("", css_classes=["wb-details"], sizing_mode="stretch_width")
        self.log = pn.pane.HTML("", css_classes=["wb-log"], sizing_mode="stretch_width")
        self.lineage = pn.pane.HTML("", css_classes=["wb-lineage"], sizing_mode="stretch_width")
        self._dist = ColumnDataSource(data=dict(x=[], p=[], color=[]))
        fig = figure(title="Forecast over bins (red: measured bin)", x_range=list(bins.LABELS),
                     height=220, width=460, toolbar_location=None)
        fig.vbar(x="x", top="p", width=0.8, color="color", source=self._dist)
        fig.xaxis.major_label_orientation = 0.7
        self.dist_pane = pn.pane.Bokeh(fig)
        self._update()

    @param.depends("candidate_id", "hardware_key", watch=True)
    def _update(self) -> None:
        if not self.candidate_id:
            return
        c = self._store.get_candidate(self.candidate_id)
        if c is None:
            self.title.object = f"<h3>Candidate {code(self.candidate_id)} not found</h3>"
            return
        parent = self._store.get_candidate(c.parent_id) if c.parent_id else None
        m = self._store.get_measurement(c.id, self.hardware_key) if self.hardware_key else None
        forecasts: Sequence[Forecast] = self._store.forecasts(candidate_ids=[c.id])
        f = next((x for x in forecasts if x.hardware_key == self.hardware_key), None) \
            or (forecasts[0] if forecasts else None)
        self.title.object = title_html(c)
        self.diff.object = side_by_side_diff(parent.source if parent else None, c.source,
                                             parent_label=f"parent {parent.id}" if parent else "",
                                             label=f"candidate {c.id}")
        self.reasoning.object = reasoning_html(f)
        if f is None:
            set_data(self._dist, dict(x=[], p=[], color=[]))
        else:
            true_bin = m.bin if m is not None and m.ok else None
            set_data(self._dist, dict(x=list(bins.LABELS), p=list(f.probabilities),
                                      color=["#d62728" if i == true_bin else "#1f77b4"
                                             for i in range(bins.N_BINS)]))
        self.details.object = measurement_html(m, self._baselines)
        self.log.object = pre(m.log[-4000:], "wb-log-text") if m is not None and m.log else ""
        self.lineage.object = lineage_html(c, lineage(c, self._store.get_candidate))

    def __panel__(self):
        return pn.Column(self.title, self.lineage,
                         pn.Row(self.dist_pane, pn.Column(self.details, self.reasoning)),
                         pn.pane.Markdown("#### Source diff against the parent"), self.diff,
                         pn.pane.Markdown("#### Compile and run log"), self.log,
                         sizing_mode="stretch_width")
