"""Every notebook in notebooks/ runs from top to bottom on the CPU, and shows what it is for.

Each `notebooks/*.ipynb` is executed with nbclient in a fresh kernel (working directory:
notebooks/) and must finish without an error within NOTEBOOK_TIMEOUT_S. For the notebooks
named in KEY_OUTPUTS, given strings must appear in the cells' outputs (a metrics table header,
the replay label, ...). A notebook added later is picked up and executed automatically.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
#: Per-cell limit; the notebooks are meant to take well under 2 minutes each on a 2-core CPU.
CELL_TIMEOUT_S = 600
#: Whole-notebook limit, checked after the run.
NOTEBOOK_TIMEOUT_S = 900

def _has_gpu() -> bool:
    """What the notebooks test: torch.cuda.is_available()."""
    import torch

    return torch.cuda.is_available()


_HAS_GPU = _has_gpu()

#: Strings that must appear in some cell's output (text, or a plain-text / HTML representation).
KEY_OUTPUTS: dict[str, list[str]] = {
    "01_quickstart.ipynb": ["problems,", "hardware: cpu | status: ok", "measured on the H100",
                            "predicted bin", "<=0.25x", "image/png"],
    "02_selective_prediction_lesson.ipynb": ["ECE", "AURC", "GPU measurements saved",
                                             "certified threshold", "image/png",
                                             "application/vnd.jupyter.widget-view+json"],
    # Replay of the shipped H100 data without a GPU; measured live on GPU 0 with one.
    "03_live_search.ipynb": ["LIVE" if _HAS_GPU else "REPLAY", "measure_all", "screen_topk", "GPU measurements",
                             "image/png"],
    "04_calibration_analysis.ipynb": ["forecaster  train->test  split", "h100->h200", "roofline",
                                      "image/png"],
}


def _outputs_text(nb) -> str:
    """Every output of every code cell as one string (stream text, errors, data by MIME type)."""
    parts: list[str] = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                parts.append(out.get("text", ""))
            elif out.get("output_type") == "error":
                parts.append("\n".join(out.get("traceback", [])))
            else:
                for mime, value in out.get("data", {}).items():
                    parts.append(mime)
                    if mime.startswith("text/"):
                        parts.append(value if isinstance(value, str) else "".join(value))
    return "\n".join(parts)


def test_notebooks_are_found_and_stripped():
    assert NOTEBOOKS, f"no notebooks in {NOTEBOOK_DIR}"
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert not cell.get("outputs") and cell.get("execution_count") is None, (
                    f"{path.name}: commit notebooks with outputs stripped")


def _too_slow(name: str, what: str, detail: str) -> str:
    """The failure message of a notebook that ran out of time: a slow or loaded machine, not
    necessarily a broken notebook, and what to try."""
    load = ""
    if hasattr(os, "getloadavg"):
        load = f" (load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    return (f"{name}: {what}{load}. The notebooks take well under 2 minutes each on 2 free cores, so this "
            "machine is probably too slow or too busy: run this test alone "
            f"(pytest tests/notebooks -k {name.split('.')[0]}) or on a quieter machine before suspecting the "
            f"notebook.\n{detail[-2000:]}")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path: Path, tmp_path: Path):
    nb = nbformat.read(path, as_version=4)
    # The kernel gets Jupyter's inline plots (ipykernel's default backend), whatever MPLBACKEND
    # this process has.
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    t0 = time.monotonic()
    try:
        client.execute(env=env)
    except nbclient.exceptions.CellTimeoutError as e:
        pytest.fail(_too_slow(path.name, f"a cell did not finish within the {CELL_TIMEOUT_S} s cell limit "
                              f"({time.monotonic() - t0:.0f} s into the notebook)", str(e)))
    except nbclient.exceptions.DeadKernelError as e:
        pytest.fail(f"{path.name}: the notebook's kernel died ({e}); killed for memory? The machine may have "
                    "too little free memory for it")
    except nbclient.exceptions.CellExecutionError as e:
        pytest.fail(f"{path.name} failed:\n{str(e)[-4000:]}")
    elapsed = time.monotonic() - t0
    (tmp_path / "executed.ipynb").write_text(json.dumps(nb))
    assert elapsed < NOTEBOOK_TIMEOUT_S, _too_slow(path.name, f"it took {elapsed:.0f} s, over the "
                                                   f"{NOTEBOOK_TIMEOUT_S} s notebook limit", "")
    text = _outputs_text(nb)
    assert "Traceback" not in text, f"{path.name} printed a traceback"
    for key in KEY_OUTPUTS.get(path.name, []):
        assert key in text, f"{path.name}: no output contains {key!r}"
    print(f"{path.name}: {elapsed:.1f} s")
