"""Calibration tab: pick a forecaster and a GPU, see its forecasts against the store's
measurements in a `CalibrationView`, or compute held-out learned forecasts when there are none.

Held-out forecasts come from problem-level cross-validation (`workbench.evaluate.crossval`):
every forecast is made by a LearnedForecaster that never saw the candidate's problem, so the
coverage and risk shown are honest. They are stored under the forecaster name `learned-heldout`.
The computation (one fit per fold; docs/app.md gives the time it takes) runs in a child process
(`workbench.ui.jobs`): the page shows its progress and elapsed time, and Cancel kills it at once.
Each fold's fit goes to the cache of fitted forecasters, so computing again over the same rows
(after a cancel, or on another day) loads the folds already fitted.
"""
from __future__ import annotations

import time

import panel as pn

from workbench.ui.calibration_view import CalibrationView, calibration_info
from workbench.ui.jobs import BackgroundJobs
from workbench.ui.safe import esc
from workbench.ui.tasks import HELD_OUT, heldout_forecasts  # noqa: F401 (re-exported)

#: Seconds between rebuilds of the pairs while the store keeps changing (a search is running).
MIN_RELOAD_S = 5.0


def hardware_keys(store) -> list[str]:
    """GPU types with measurements in the store (the CPU interpreter excluded)."""
    return sorted({m.hardware_key for m in store.measurements()} - {"cpu"})


def forecaster_names(store, hardware_key: str) -> list[str]:
    """Forecasters with reference-relative forecasts on `hardware_key`, held-out ones first."""
    names = {f.forecaster for f in store.forecasts(hardware_key=hardware_key) if f.relative_to == "reference"}
    return sorted(names, key=lambda n: (n != HELD_OUT, n))


class CalibrationPage(pn.viewable.Viewer):
    """GPU and forecaster pickers, a compute button and the CalibrationView they feed.

    `refresh()` is called by the app's periodic callback; it rebuilds only when the store's
    version moved, and at most every MIN_RELOAD_S seconds.
    """

    def __init__(self, store, jobs: BackgroundJobs | None = None, **params):
        super().__init__(**params)
        self._store = store
        self._jobs = jobs or BackgroundJobs()
        keys = hardware_keys(store)
        self.gpu = pn.widgets.Select(name="GPU", options=keys, value=keys[0] if keys else None)
        self.forecaster = pn.widgets.Select(name="Forecaster", options=[])
        self.compute_btn = pn.widgets.Button(label="Compute held-out learned forecasts",
                                             button_type="primary", css_classes=["wb-compute"])
        self.compute_btn.on_click(self.compute)
        self.cancel_btn = pn.widgets.Button(label="Cancel", css_classes=["wb-compute-cancel"], visible=False)
        self.cancel_btn.on_click(self.cancel)
        # HTML with escaped names: GPU keys and forecaster names come from the database.
        self.note = pn.pane.HTML("", css_classes=["wb-calibration-note"], sizing_mode="stretch_width")
        self.view = CalibrationView()
        self._seen_version = -1
        self._loaded_at = 0.0
        self._loaded_key: tuple[str, str] = ("", "")
        self.gpu.param.watch(lambda e: self.refresh(force=True), "value")
        self.forecaster.param.watch(lambda e: self._load(), "value")
        self.refresh(force=True)

    @property
    def job_name(self) -> str:
        return f"heldout:{self.gpu.value}"

    def compute(self, event=None) -> None:
        """Start computing held-out forecasts for the chosen GPU in a child process."""
        key = self.gpu.value
        if not key:
            return
        self._jobs.submit(self.job_name, "workbench.ui.tasks:heldout_job", child=True,
                          db=str(self._store.path), hardware_key=key)
        self.refresh(force=True)

    def cancel(self, event=None) -> None:
        """Kill the computation at once (folds already fitted stay in the fit cache)."""
        self._jobs.cancel(self.job_name)
        self.refresh(force=True)

    def refresh(self, force: bool = False) -> None:
        v = self._store.version()
        if not force and (v == self._seen_version or time.monotonic() - self._loaded_at < MIN_RELOAD_S):
            self._update_note()
            return
        self._seen_version = v
        key = self.gpu.value
        names = forecaster_names(self._store, key) if key else []
        if names != list(self.forecaster.options):
            current = self.forecaster.value
            self.forecaster.options = names
            self.forecaster.value = current if current in names else (names[0] if names else None)
        self._load(force=True)

    def _load(self, force: bool = False) -> None:
        key, name = self.gpu.value or "", self.forecaster.value or ""
        if not force and (key, name) == self._loaded_key:
            return
        fs = self._store.forecasts(forecaster=name, hardware_key=key) if key and name else []
        ms = self._store.measurements(hardware_key=key) if key else []
        self.view.set_info(calibration_info(fs, ms))
        self._loaded_key, self._loaded_at = (key, name), time.monotonic()
        self._update_note()

    def _update_note(self) -> None:
        key, name = self.gpu.value, self.forecaster.value
        status = self._jobs.status(self.job_name) if key else ""
        if not key:
            text = ("<b>No recorded measurements.</b> Load the shipped data (<code>workbench dataset "
                    "load-shipped</code>) or measure candidates on a GPU.")
        elif not name:
            text = (f"No forecasts on <b>{esc(key)}</b> yet: compute held-out learned forecasts "
                    "(problem-level cross-validation in a child process, with progress and Cancel; "
                    "docs/app.md says how long it takes) or run a search.")
        else:
            text = (f"Forecaster <b>{esc(name)}</b> on <b>{esc(key)}</b>: {self.view._info.n} forecasts "
                    "paired with correct measurements. Trusted forecasts stand in for a GPU measurement.")
        elapsed = f"{self._jobs.elapsed_s(self.job_name):.0f} s" if status else ""
        if status == "running":
            progress = self._jobs.message(self.job_name) or "starting..."
            text += (f" <span class='wb-compute-progress'>Computing held-out learned forecasts ({elapsed} so far): "
                     f"{esc(progress)}</span>")
        elif status == "cancelled":
            text += f" <span class='wb-compute-progress'>Held-out forecasts cancelled after {elapsed}.</span>"
        elif status.startswith("failed"):
            text += f" <span class='wb-compute-progress'>Held-out forecasts {esc(status)}.</span>"
        elif status == "done":
            text += f" <span class='wb-compute-progress'>Held-out forecasts computed in {elapsed}.</span>"
        text = f"<p>{text}</p>"
        self.compute_btn.disabled = status == "running" or not key
        self.cancel_btn.visible = status == "running"
        if text != self.note.object:
            self.note.object = text

    def __panel__(self):
        return pn.Column(pn.Row(self.gpu, self.forecaster, self.compute_btn, self.cancel_btn), self.note, self.view,
                         sizing_mode="stretch_width")
