"""The workbench app: `panel serve workbench/app.py` (or `make run`, which binds 127.0.0.1).

Data store + views + one background runner per server process (kept in `pn.state.cache`, see
`workbench.ui.runner.shared`). The database is $WORKBENCH_DB or ./workbench.sqlite; on first
start with no measurements it loads the real measurements shipped in kernels_cache/shipped/.
With no GPU, searches replay those measurements and the page says REPLAY.

Who can reach it (`workbench.ui.serving`): the app has no login of its own, so it shows only a
refusal when its server listens beyond loopback (an `--address` other than 127.0.0.1, or none:
every interface) without a login, unless WORKBENCH_ALLOW_REMOTE=1. To serve it to others, give it
a password, e.g.

    panel serve workbench/app.py --basic-auth <password or users.json> \\
        --cookie-secret <random string> --address 0.0.0.0 --allow-websocket-origin <host>:5006

(Panel's `--basic-auth` takes one shared password or a JSON file of user -> password.)
WORKBENCH_AUTH=1 makes the app refuse to render unless its server asks for a login.

Every text a candidate or a model wrote is shown escaped (`workbench.ui.safe`), and the page
loads nothing from outside this server (`OfflineFast`: no web font).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import panel as pn

from workbench.ui.calibration_page import CalibrationPage, hardware_keys
from workbench.ui.compare_view import CompareView
from workbench.ui.dataset_view import DatasetView
from workbench.ui.inspector import CandidateInspector
from workbench.ui.runner import shared
from workbench.ui.safe import code, esc
from workbench.ui.search_view import SearchView
from workbench.ui.searches_view import SearchesView
from workbench.ui.serving import OfflineFast, exposure_refusal

pn.extension("tabulator")

TABS = ("Search", "Compare", "Searches", "Calibration", "Dataset", "Inspector")
TITLE = "GPU Forecasters Workbench"
POLL_MS = 700


def open_store(path: str | Path | None = None):
    """The server's store, loading the shipped measurements into a database without any."""
    from workbench.dataset import DEFAULT_SHIPPED_DIR, load_into_store
    from workbench.problems import list_problems
    from workbench.store import Store

    key = ("workbench-store", str(path or os.environ.get("WORKBENCH_DB", "workbench.sqlite")))
    if key in pn.state.cache:
        return pn.state.cache[key]
    store = Store(Path(key[1]))
    if not store.problems():
        store.put_problems(list_problems())
    if not store.measurements() and Path(DEFAULT_SHIPPED_DIR).joinpath("kernels.parquet").exists():
        load_into_store(DEFAULT_SHIPPED_DIR, store)
    pn.state.cache[key] = store
    return store


def gpu_available() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:  # noqa: BLE001 - no GPU stack
        return False


def banner_text(store) -> str:
    """REPLAY banner (HTML, GPU keys escaped) when there is no GPU, naming the GPU types whose
    measurements are replayed. No banner when live searches measure on a Ray cluster's GPUs
    ($WORKBENCH_EXECUTOR=ray)."""
    from workbench.compose import executor_from_env

    if gpu_available() or executor_from_env()[0] == "ray":
        return ""
    keys = hardware_keys(store)
    if not keys:
        return ("<p><b>REPLAY MODE</b> — no GPU here and no recorded measurements: load shipped data "
                f"({code('workbench dataset load-shipped')}).</p>")
    return ("<p><b>REPLAY MODE</b> — no GPU here: searches are answered from real measurements recorded on "
            + ", ".join(esc(k.upper()) for k in keys) + " GPUs, shipped in kernels_cache/.</p>")


def page(main: list) -> pn.template.BaseTemplate:
    """The page template, with every resource served by this server (no web font from outside).

    No busy indicator: Panel keeps the templates' busy indicators in one process-wide list and
    sets all of them whenever any session starts handling an event; on that path Bokeh has
    raised ("_pending_writes should be non-None ...") and dropped the event being handled (a
    click on a candidate row that never opened the Inspector). The search status line says what
    the app is doing instead."""
    return pn.template.FastListTemplate(title=TITLE, main=main, design=OfflineFast, busy_indicator=None)


def build(store=None) -> pn.template.BaseTemplate:
    """One browser session's page over the process-wide store and runner; only a refusal (no
    data) when the server is reachable from other machines without a login (see module doc)."""
    refusal = exposure_refusal()
    if refusal:
        print(f"workbench: refusing to show the app: {refusal}", file=sys.stderr)
        return page([pn.pane.HTML(f"<p><b>Not served.</b> {esc(refusal)}</p>", css_classes=["wb-refusal"])])
    store = store or open_store()
    sh = shared(store)
    search = SearchView(store, sh["runner"])
    compare = CompareView(store, sh["jobs"])
    searches = SearchesView(store)
    calib = CalibrationPage(store, sh["jobs"])
    dataset = DatasetView(store)
    inspector = CandidateInspector(store)
    tabs = pn.Tabs(*zip(TABS, (search, compare, searches, calib, dataset, inspector)), dynamic=False)

    def open_candidate(view):
        def cb(*_):
            inspector.show(view.selected_candidate, view.selected_gpu,
                           search_id=getattr(view, "selected_search", ""),
                           replay=getattr(view, "selected_replay", False))
            tabs.active = TABS.index("Inspector")
        view.param.watch(cb, ["selected_candidate"])

    open_candidate(search)
    open_candidate(dataset)

    def reopen(event):
        search.show_search(event.new)
        tabs.active = TABS.index("Search")
    searches.param.watch(reopen, ["reopen"])

    def poll():
        search.refresh()
        compare.refresh()
        searches.refresh()
        calib.refresh()

    pn.state.add_periodic_callback(poll, period=POLL_MS)
    return page([pn.pane.HTML(banner_text(store), css_classes=["wb-banner"]), tabs])


if __name__.startswith("bokeh") or __name__ == "__main__":
    build().servable()
