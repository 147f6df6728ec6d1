"""Calibration view: forecast vs measured, a confidence-threshold slider, reliability and
risk-coverage plots.

Split as the style guide asks: `calibration_info` is a pure function from paired forecasts and
measurements to arrays; `threshold_summary` turns a threshold into coverage, selective risk
and GPU measurements saved; `target_risk_summary` turns a target risk into the threshold a
conformal risk controller certifies on half of the problems and what trusting it saves on the
other half; `CalibrationView` renders them with Bokeh and only swaps column data when the
slider moves, so an update stays cheap with tens of thousands of points.
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
    problem_ids: np.ndarray | None = None  # str; None when built without them

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
                     bins.bin_of(m.speedup), f.abstained, f.problem_id))
    if not rows:
        z = np.zeros(0)
        return CalibrationInfo(np.array([], dtype=object), z, z, z, z.astype(int), z.astype(int),
                               z.astype(bool), np.array([], dtype=object))
    cols = list(zip(*rows))
    return CalibrationInfo(
        candidate_ids=np.array(cols[0], dtype=object),
        expected_log2=np.array(cols[1], dtype=float),
        measured_log2=np.array(cols[2], dtype=float),
        confidence=np.array(cols[3], dtype=float),
        predicted_bin=np.array(cols[4], dtype=int),
        true_bin=np.array(cols[5], dtype=int),
        abstained=np.array(cols[6], dtype=bool),
        problem_ids=np.array(cols[7], dtype=object),
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


@dataclass(frozen=True)
class TargetRiskSummary:
    """What a conformal risk controller certifies for `target_risk`, calibrated on one half of
    the problems and applied to the other (held-out) half."""

    target_risk: float
    delta: float
    threshold: float           # certified confidence threshold; inf when none was certified
    calibration_n: int         # forecasts the controller calibrated on
    test_n: int                # held-out forecasts it was applied to
    trusted: int               # held-out forecasts trusted (each a GPU measurement saved)
    test_risk: float           # bin error rate among the trusted held-out forecasts (nan if none)

    @property
    def share_trusted(self) -> float:
        return self.trusted / self.test_n if self.test_n else 0.0


def target_risk_summary(info: CalibrationInfo, target_risk: float, delta: float = 0.1,
                        seed: int = 0) -> TargetRiskSummary | None:
    """Split the problems in two at random (`seed`), calibrate a `ConformalRiskController`
    (target_risk, delta) on one half's forecasts and apply its threshold to the other half's:
    the share trusted there is the share of GPU measurements saved. None with fewer than two
    problems (nothing to hold out)."""
    from workbench.calibration.conformal import ConformalRiskController

    if info.problem_ids is None or len(set(info.problem_ids.tolist())) < 2:
        return None
    problems = sorted(set(info.problem_ids.tolist()))
    np.random.default_rng(seed).shuffle(problems)
    calib = np.isin(info.problem_ids, problems[: len(problems) // 2])
    conf = np.where(info.abstained, -np.inf, info.confidence)
    ctl = ConformalRiskController(target_risk=target_risk, delta=delta).calibrate_arrays(
        conf[calib], info.error[calib])
    test = ~calib
    trusted = test & (conf >= ctl.threshold_)
    k = int(trusted.sum())
    return TargetRiskSummary(target_risk=float(target_risk), delta=float(delta),
                             threshold=float(ctl.threshold_), calibration_n=int(calib.sum()),
                             test_n=int(test.sum()), trusted=k,
                             test_risk=float(info.error[trusted].mean()) if k else float("nan"))


def target_risk_text(t: TargetRiskSummary | None) -> str:
    """The view's sentence for a TargetRiskSummary (Markdown)."""
    if t is None:
        return "A target risk needs forecasts of at least two problems (one half calibrates, one is held out)."
    head = (f"**target risk {t.target_risk:.2f}** (guaranteed with probability {1 - t.delta:.0%}; "
            f"calibrated on {t.calibration_n} forecasts of half the problems): ")
    if not math.isfinite(t.threshold):
        return head + ("no threshold certified, so every candidate goes to the GPU: "
                       "**share trusted** <span class='wb-target-share'>0.0%</span>, "
                       f"**GPU measurements saved** 0 of {t.test_n} held-out forecasts.")
    risk = "n/a" if math.isnan(t.test_risk) else f"{t.test_risk:.3f}"
    return head + (f"certified threshold {t.threshold:.3f}; on the {t.test_n} held-out forecasts of the "
                   f"other problems: **share trusted** <span class='wb-target-share'>"
                   f"{100 * t.share_trusted:.1f}%</span>, **GPU measurements saved** {t.trusted} of "
                   f"{t.test_n}, selective risk there {risk}.")


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
    target_risk = param.Number(default=0.3, bounds=(0.05, 0.95), step=0.05,
                               doc="error rate among trusted forecasts the conformal controller must keep")
    target = param.Parameter(doc="TargetRiskSummary at the current target risk (None: too few problems)")

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
        self.target_slider = pn.widgets.FloatSlider.from_param(
            self.param.target_risk, name="Target risk (conformal controller)")
        self.target_stats = pn.pane.Markdown("", sizing_mode="stretch_width", css_classes=["wb-target-stats"])
        self.use_target_btn = pn.widgets.Button(label="Set the threshold to the certified one")
        self.use_target_btn.on_click(self._use_target)
        self._refresh_static()
        self._on_threshold()
        self._on_target()

    # ------------------------------------------------------------------ data
    def set_info(self, info: CalibrationInfo) -> None:
        """Swap in new pairs (e.g. after the store's version moved)."""
        self._info = info
        set_data(self._scatter, self._scatter_data())
        self._refresh_static()
        self._on_threshold()
        self._on_target()

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

    @param.depends("target_risk", watch=True)
    def _on_target(self) -> None:
        self.target = target_risk_summary(self._info, self.target_risk)
        self.target_stats.object = target_risk_text(self.target)
        self.use_target_btn.disabled = self.target is None or not math.isfinite(self.target.threshold)

    def _use_target(self, event=None) -> None:
        if self.target is not None and math.isfinite(self.target.threshold):
            self.threshold = min(1.0, max(0.0, self.target.threshold))

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
        help_text = pn.pane.Markdown(
            "A *trusted* forecast stands in for a GPU measurement. The threshold slider shows what "
            "trusting every forecast at or above a confidence costs (selective risk: the share of "
            "trusted forecasts in the wrong speedup bin). The target-risk slider asks a conformal "
            "risk controller for the lowest threshold whose risk it can guarantee, checked on "
            "problems it did not calibrate on.", sizing_mode="stretch_width")
        return pn.Column(help_text, self.slider, self.stats,
                         pn.Row(self.target_slider, self.use_target_btn), self.target_stats,
                         pn.pane.Bokeh(sc),
                         pn.Row(pn.pane.Bokeh(rel), pn.pane.Bokeh(rc)), sizing_mode="stretch_width")
