"""Calibration view: forecast vs measured, a confidence-threshold slider, reliability and
risk-coverage plots.

Split as the style guide asks: `calibration_info` is a pure function from paired forecasts and
measurements to arrays; `threshold_summary` turns a threshold into coverage, selective risk
and GPU measurements saved; `CalibrationView` renders both with Bokeh and only swaps column
data when the slider moves, so an update stays cheap with tens of thousands of points.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource, LinearColorMapper, Span
from bokeh.plotting import figure

from workbench import bins
from workbench.records import Forecast, Measurement
from workbench.ui.sources import bokeh_edits, set_data


@dataclass(frozen=True)
class CalibrationInfo:
    """Arrays over the forecasts that have an ok measurement, one entry per pair."""

    candidate_ids: np.ndarray     # str
    expected_log2: np.ndarray     # forecast expected log2-speedup
    measured_log2: np.ndarray     # measured log2-speedup
    confidence: np.ndarray        # max probability of the forecast
    predicted_bin: np.ndarray     # 0..7
    true_bin: np.ndarray          # 0..7
    abstained: np.ndarray         # bool

    @property
    def n(self) -> int:
        return int(self.confidence.size)

    @property
    def error(self) -> np.ndarray:
        """1 where the predicted bin is wrong (the risk a trusted forecast carries)."""
        return (self.predicted_bin != self.true_bin).astype(float)


def calibration_info(forecasts: Sequence[Forecast], measurements: Sequence[Measurement]) -> CalibrationInfo:
    """Pair reference-relative forecasts with ok measurements of the same candidate and hardware.

    Parent-relative forecasts are skipped: their bins are not comparable with the measured
    speedup over the reference.
    """
    by_key = {(m.candidate_id, m.hardware_key): m for m in measurements if m.ok and m.speedup}
    rows = []
    for f in forecasts:
        m = by_key.get((f.candidate_id, f.hardware_key))
        if m is None or f.relative_to != "reference":
            continue
        rows.append((f.candidate_id, f.expected_log2_speedup, math.log2(m.speedup),
                     0.0 if f.abstained else f.confidence, f.predicted_bin,
                     bins.bin_of(m.speedup), f.abstained))
    if not rows:
        z = np.zeros(0)
        return CalibrationInfo(np.array([], dtype=object), z, z, z, z.astype(int), z.astype(int),
                               z.astype(bool))
    cols = list(zip(*rows))
    return CalibrationInfo(
        candidate_ids=np.array(cols[0], dtype=object),
        expected_log2=np.array(cols[1], dtype=float),
        measured_log2=np.array(cols[2], dtype=float),
        confidence=np.array(cols[3], dtype=float),
        predicted_bin=np.array(cols[4], dtype=int),
        true_bin=np.array(cols[5], dtype=int),
        abstained=np.array(cols[6], dtype=bool),
    )


@dataclass(frozen=True)
class ThresholdSummary:
    threshold: float
    coverage: float            # share of forecasts trusted (confidence >= threshold)
    selective_risk: float      # bin error rate among trusted forecasts (nan when none)
    trusted: int               # forecasts that stand in for a measurement
    deferred: int              # forecasts sent to the GPU
    gpu_saved_pct: float       # trusted / all, in percent


def threshold_summary(info: CalibrationInfo, threshold: float) -> ThresholdSummary:
    """Coverage, selective risk and GPU measurements saved at a confidence threshold.

    Abstentions are never trusted, whatever the threshold.
    """
    trusted = (info.confidence >= threshold) & ~info.abstained
    k = int(trusted.sum())
    n = info.n
    risk = float(info.error[trusted].mean()) if k else float("nan")
    return ThresholdSummary(threshold=float(threshold), coverage=k / n if n else 0.0,
                            selective_risk=risk, trusted=k, deferred=n - k,
                            gpu_saved_pct=100.0 * k / n if n else 0.0)


def reliability(info: CalibrationInfo, n_buckets: int = 10) -> dict[str, np.ndarray]:
    """Equal-width confidence buckets: mean confidence, accuracy and count per bucket."""
    edges = np.linspace(0, 1, n_buckets + 1)
    idx = np.clip(np.digitize(info.confidence, edges[1:-1]), 0, n_buckets - 1)
    conf, acc, cnt = np.zeros(n_buckets), np.zeros(n_buckets), np.zeros(n_buckets)
    correct = 1.0 - info.error
    for b in range(n_buckets):
        sel = idx == b
        cnt[b] = sel.sum()
        if cnt[b]:
            conf[b] = info.confidence[sel].mean()
            acc[b] = correct[sel].mean()
    return {"left": edges[:-1], "right": edges[1:], "confidence": conf, "accuracy": acc, "count": cnt}


def risk_coverage(info: CalibrationInfo) -> dict[str, np.ndarray]:
    """Risk-coverage curve: sort by confidence (desc), risk among the top-k for every k."""
    order = np.argsort(-info.confidence, kind="stable")
    err = info.error[order]
    k = np.arange(1, err.size + 1)
    return {"coverage": k / max(err.size, 1), "risk": np.cumsum(err) / k,
            "confidence": info.confidence[order]}


class CalibrationView(pn.viewable.Viewer):
    """Scatter of forecast vs measured log-speedup, coloured by confidence, plus the slider."""

    threshold = param.Number(default=0.5, bounds=(0.0, 1.0), step=0.01,
                             doc="confidence at or above which a forecast is trusted")
    summary = param.Parameter(doc="ThresholdSummary at the current threshold")

    def __init__(self, info: CalibrationInfo | None = None, **params):
        super().__init__(**params)
        self._info = info or calibration_info([], [])
        self._scatter = ColumnDataSource(data=self._scatter_data())
        self._rc = ColumnDataSource(data=dict(coverage=[], risk=[]))
        self._rel = ColumnDataSource(data=dict(left=[], right=[], accuracy=[], confidence=[]))
        self._rc_marker = Span(location=0.0, dimension="height", line_dash="dashed", line_color="red")
        self._figs = self._make_figures()
        self.slider = pn.widgets.FloatSlider.from_param(self.param.threshold, name="Confidence threshold")
        self.stats = pn.pane.Markdown("", sizing_mode="stretch_width", css_classes=["wb-threshold-stats"])
        self._refresh_static()
        self._on_threshold()

    # ------------------------------------------------------------------ data
    def set_info(self, info: CalibrationInfo) -> None:
        """Swap in new pairs (e.g. after the store's version moved)."""
        self._info = info
        set_data(self._scatter, self._scatter_data())
        self._refresh_static()
        self._on_threshold()

    def _scatter_data(self, trusted: np.ndarray | None = None) -> dict:
        i = self._info
        if trusted is None:
            trusted = np.zeros(i.n, dtype=bool)
        return dict(x=i.measured_log2, y=i.expected_log2, conf=i.confidence,
                    alpha=np.where(trusted, 0.9, 0.25), cid=i.candidate_ids)

    def _refresh_static(self) -> None:
        rel = reliability(self._info)
        set_data(self._rel, {k: rel[k] for k in ("left", "right", "accuracy", "confidence")})
        rc = risk_coverage(self._info)
        set_data(self._rc, dict(coverage=rc["coverage"], risk=rc["risk"]))

    @param.depends("threshold", watch=True)
    def _on_threshold(self) -> None:
        s = threshold_summary(self._info, self.threshold)
        trusted = (self._info.confidence >= self.threshold) & ~self._info.abstained
        # Only alpha changes with the threshold: send that column alone to the browser.
        with bokeh_edits():
            self._scatter.data["alpha"] = np.where(trusted, 0.9, 0.25)
            self._rc_marker.location = s.coverage
        risk = "n/a" if math.isnan(s.selective_risk) else f"{s.selective_risk:.3f}"
        self.stats.object = (
            f"**coverage** <span class='wb-coverage'>{s.coverage:.3f}</span> &nbsp; "
            f"**selective risk** <span class='wb-risk'>{risk}</span> &nbsp; "
            f"**trusted** {s.trusted} &nbsp; **sent to GPU** {s.deferred} &nbsp; "
            f"**GPU measurements saved** {s.gpu_saved_pct:.1f}% &nbsp; (n = {self._info.n})")
        self.summary = s

    # ------------------------------------------------------------------ figures
    def _make_figures(self):
        mapper = LinearColorMapper(palette="Viridis256", low=0.0, high=1.0)
        sc = figure(title="Forecast vs measured (log2 speedup); opaque = trusted",
                    x_axis_label="measured log2 speedup", y_axis_label="forecast E[log2 speedup]",
                    height=360, sizing_mode="stretch_width", tools="pan,wheel_zoom,box_zoom,reset,tap")
        sc.scatter("x", "y", source=self._scatter, size=5, fill_alpha="alpha", line_alpha=0,
                   color={"field": "conf", "transform": mapper})
        lim = (-3.5, 3.5)
        sc.line(list(lim), list(lim), line_dash="dotted", color="gray")
        rel = figure(title="Reliability (10 buckets)", x_axis_label="confidence",
                     y_axis_label="accuracy", height=300, width=320, x_range=(0, 1), y_range=(0, 1))
        rel.quad(left="left", right="right", top="accuracy", bottom=0, source=self._rel,
                 fill_alpha=0.5)
        rel.line([0, 1], [0, 1], line_dash="dotted", color="gray")
        rc = figure(title="Risk-coverage (line: current threshold)", x_axis_label="coverage",
                    y_axis_label="selective risk", height=300, width=320, x_range=(0, 1))
        rc.line("coverage", "risk", source=self._rc, line_width=2)
        rc.add_layout(self._rc_marker)
        return sc, rel, rc

    def __panel__(self):
        sc, rel, rc = self._figs
        return pn.Column(self.slider, self.stats, pn.pane.Bokeh(sc),
                         pn.Row(pn.pane.Bokeh(rel), pn.pane.Bokeh(rc)), sizing_mode="stretch_width")
