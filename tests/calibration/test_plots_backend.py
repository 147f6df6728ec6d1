"""The plot renderers pick the headless Agg backend only when no backend was chosen.

Run in subprocesses: the matplotlib backend is process-global state.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLOT = ("import numpy as np\n"
        "from workbench.calibration import plots\n"
        "p = np.full((4, 8), 1 / 8); y = np.array([0, 1, 2, 3])\n"
        "plots.plot_reliability(plots.reliability_info(p, y))\n"
        "import matplotlib; print(matplotlib.get_backend().lower())\n")


def _backend(prelude: str, mplbackend: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    if mplbackend:
        env["MPLBACKEND"] = mplbackend
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run([sys.executable, "-c", prelude + PLOT], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip().splitlines()[-1]


def test_headless_default_is_agg():
    assert _backend("", None) == "agg"


def test_backend_chosen_through_mplbackend_is_kept():
    # What ipykernel does for Jupyter's inline plots; a forced Agg would make figures vanish.
    assert _backend("", "svg") == "svg"


def test_backend_of_an_imported_pyplot_is_kept():
    assert _backend("import matplotlib; matplotlib.use('pdf'); import matplotlib.pyplot\n", None) == "pdf"
