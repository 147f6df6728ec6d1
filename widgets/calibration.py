"""A confidence-threshold slider with coverage, selective risk and GPU measurements saved.

The numbers come from `workbench.ui.calibration_view.threshold_summary`, the function behind
the app's Calibration tab. Display the widget by leaving it as a cell's last expression (or
`display(w.widget)`); read `w.summary` from Python.
"""
from __future__ import annotations

import html
import math
from typing import Sequence

import ipywidgets as widgets

from workbench.records import Forecast, Measurement
from workbench.ui.calibration_view import CalibrationInfo, ThresholdSummary, calibration_info, threshold_summary


def summary_html(s: ThresholdSummary, n: int) -> str:
    """The summary as a short HTML line (coverage and risk are fractions, saved is a percent)."""
    risk = "n/a (nothing trusted)" if math.isnan(s.selective_risk) else f"{s.selective_risk:.3f}"
    return (f"<b>coverage</b> <span class='wb-coverage'>{s.coverage:.3f}</span> &nbsp; "
            f"<b>selective risk</b> <span class='wb-risk'>{html.escape(risk)}</span> &nbsp; "
            f"<b>trusted</b> {s.trusted} &nbsp; <b>sent to GPU</b> {s.deferred} &nbsp; "
            f"<b>GPU measurements saved</b> {s.gpu_saved_pct:.1f}% &nbsp; (n = {n})")


class CalibrationWidget:
    """Slider (confidence threshold in [0, 1]) + HTML output, over forecast/measurement pairs.

    A forecast is trusted when its confidence (max bin probability) is at least the threshold;
    abstentions are never trusted. `summary` is the ThresholdSummary at the slider's value.
    """

    def __init__(self, info: CalibrationInfo, threshold: float = 0.5, title: str = ""):
        self.info = info
        self.slider = widgets.FloatSlider(value=threshold, min=0.0, max=1.0, step=0.01,
                                          description="threshold", continuous_update=True,
                                          readout_format=".2f")
        self.output = widgets.HTML()
        self.title = widgets.HTML(f"<b>{html.escape(title)}</b>" if title else "")
        self.widget = widgets.VBox([self.title, self.slider, self.output])
        self.summary: ThresholdSummary = threshold_summary(info, threshold)
        self.slider.observe(self._on_change, names="value")
        self._render()

    @classmethod
    def from_records(cls, forecasts: Sequence[Forecast], measurements: Sequence[Measurement],
                     threshold: float = 0.5, title: str = "") -> "CalibrationWidget":
        return cls(calibration_info(forecasts, measurements), threshold, title)

    @classmethod
    def from_store(cls, store, forecaster: str, hardware_key: str, threshold: float = 0.5) -> "CalibrationWidget":
        """Forecasts of `forecaster` on `hardware_key` against the store's measurements there."""
        return cls.from_records(store.forecasts(forecaster=forecaster, hardware_key=hardware_key),
                                store.measurements(hardware_key=hardware_key), threshold,
                                title=f"{forecaster} on {hardware_key}")

    def _on_change(self, change) -> None:
        self.summary = threshold_summary(self.info, float(change["new"]))
        self._render()

    def _render(self) -> None:
        if self.info.n == 0:
            self.output.value = ("No forecast has a correct measurement to compare with: compute "
                                 "forecasts (Calibration tab or `workbench evaluate`) or load data.")
        else:
            self.output.value = summary_html(self.summary, self.info.n)

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)
