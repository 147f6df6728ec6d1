"""The workbench app: `panel serve workbench/app.py` (or `make run`).

Data store + views + one background runner per server process (kept in `pn.state.cache`).
The database is $WORKBENCH_DB or ./workbench.sqlite; on first start with no measurements it
loads the real measurements shipped in kernels_cache/shipped/. With no GPU, searches replay
those measurements and the page says REPLAY.

Exposing the app beyond 127.0.0.1: require a login with Panel's built-in auth, e.g.
`panel serve workbench/app.py --basic-auth <password> --cookie-secret <secret> --address 0.0.0.0`.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path

import panel as pn

from workbench.ui.calibration_view import CalibrationView, calibration_info
from workbench.ui.dataset_view import DatasetView
from workbench.ui.inspector import CandidateInspector
from workbench.ui.runner import SearchRunner
from workbench.ui.search_view import SearchView

pn.extension("tabulator")

HELD_OUT = "learned-heldout"


def open_store():
    """The server's store, loading the shipped measurements into an empty database once."""
    from workbench.dataset import DEFAULT_SHIPPED_DIR, load_into_store
    from workbench.problems import list_problems
    from workbench.store import Store

    store = Store(Path(os.environ.get("WORKBENCH_DB", "workbench.sqlite")))
    if not store.problems():
        store.put_problems(list_problems())
    if not store.measurements() and Path(DEFAULT_SHIPPED_DIR).joinpath("kernels.parquet").exists():
        load_into_store(DEFAULT_SHIPPED_DIR, store)
    return store


def heldout_forecasts(store, hardware_key: str) -> None:
    """Learned-forecaster forecasts with problem-level cross-validation, stored as `learned-heldout`:
    every forecast comes from a model that never saw its problem."""
    from workbench.evaluate.crossval import evaluate
    from workbench.forecast.learned import LearnedForecaster

    ms = store.measurements(hardware_key=hardware_key)
    res = evaluate(lambda: LearnedForecaster(), store.problems(), store.candidates(), ms, gpu=hardware_key)
    store.put_forecasts([f.replace(forecaster=HELD_OUT) for f in res.forecasts])


def state():
    """Per-process shared objects: store, runner, background jobs."""
    if "workbench" not in pn.state.cache:
        store = open_store()
        st = {"store": store, "runner": SearchRunner(store), "jobs": {}}
        pn.state.cache["workbench"] = st
    return pn.state.cache["workbench"]


def build() -> pn.template.BaseTemplate:
    st = state()
    store, runner = st["store"], st["runner"]
    keys = sorted({m.hardware_key for m in store.measurements()} - {"cpu"})
    key = keys[0] if keys else ""
    search = SearchView(store, runner)
    inspector = CandidateInspector(store)
    dataset = DatasetView(store)
    calib = CalibrationView(calibration_info(store.forecasts(forecaster=HELD_OUT, hardware_key=key),
                                             store.measurements(hardware_key=key)))
    calib_note = pn.pane.Markdown(f"Held-out learned forecasts on **{key or 'no data'}** against measurements.")
    if key and not store.forecasts(forecaster=HELD_OUT, hardware_key=key) and key not in st["jobs"]:
        job = threading.Thread(target=heldout_forecasts, args=(store, key), daemon=True)
        st["jobs"][key] = job
        job.start()
        calib_note.object += " Computing them in the background (about a minute)..."

    def follow(view):
        def cb(*_):
            inspector.hardware_key = view.selected_gpu
            inspector.candidate_id = view.selected_candidate
            tabs.active = 3
        view.param.watch(cb, ["selected_candidate"])

    def poll():
        search.refresh()
        if calib._info.n == 0 and key:
            fs = store.forecasts(forecaster=HELD_OUT, hardware_key=key)
            if fs:
                calib.set_info(calibration_info(fs, store.measurements(hardware_key=key)))
                calib_note.object = f"Held-out learned forecasts on **{key}** against measurements."

    tabs = pn.Tabs(("Search", search), ("Calibration", pn.Column(calib_note, calib)),
                   ("Dataset", dataset), ("Inspector", inspector), dynamic=False)
    follow(search)
    follow(dataset)
    pn.state.add_periodic_callback(poll, period=700)
    try:
        import torch

        live = torch.cuda.is_available()
    except Exception:  # noqa: BLE001
        live = False
    banner = ("" if live else
              "**REPLAY MODE** — no GPU here: searches are answered from real measurements recorded on "
              + ", ".join(k.upper() for k in keys) + " GPUs, shipped in kernels_cache/.")
    tmpl = pn.template.FastListTemplate(title="GPU Forecasters Workbench",
                                        main=[pn.pane.Markdown(banner, css_classes=["wb-banner"]), tabs])
    return tmpl


if __name__.startswith("bokeh") or __name__ == "__main__":
    build().servable()
