"""The README's "Bring your own problem" commands, run as written on a fresh folder with no GPU,
with the problem file created exactly as docs/problems.md shows it."""
from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEMO = "/tmp/byo-demo"


def _readme_block() -> str:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Bring your own problem"):]
    return re.search(r"```\n(.*?)```", section, re.S).group(1)


def _docs_file() -> str:
    text = (ROOT / "docs" / "problems.md").read_text()
    return re.search(r"cat > /tmp/byo-demo/scaled_gelu.py <<'PY'\n(.*?)\nPY\n", text, re.S).group(1) + "\n"


def test_the_readme_bring_your_own_commands_work_as_written(tmp_path):
    block = _readme_block()
    assert DEMO in block and "workbench search" in block
    (tmp_path / "scaled_gelu.py").write_text(_docs_file())
    # The folder the README names is this test's own temporary folder; nothing else changes.
    script = "set -euo pipefail\nworkbench() { \"$WB_PYTHON\" -m workbench.cli \"$@\"; }\n" + \
        block.replace(DEMO, str(tmp_path))
    env = dict(os.environ, WB_PYTHON=sys.executable, PYTHONPATH=str(ROOT), CUDA_VISIBLE_DEVICES="",
               WORKBENCH_CACHE_DIR=str(tmp_path / "cache"), HOME=str(tmp_path))
    env.pop("WORKBENCH_DB", None)
    env.pop("TRITON_INTERPRET", None)  # the README sets it where it is needed
    out = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    text = out.stdout
    assert "counts:    derived" in text and "CPU sizes: batch_size=" in text and "contract:" in text
    assert "predicted bin:" in text
    assert re.search(r"GPU measurements used:\s+3 / 3", text), text
    assert "finished:                budget spent" in text
    assert "forecaster roofline" in out.stderr  # the CPU default, said at the start
    with sqlite3.connect(tmp_path / "workbench.sqlite") as db:
        (state,) = db.execute("SELECT state FROM searches").fetchone()
        rows = db.execute("SELECT precision, tolerance FROM measurements").fetchall()
    assert state == "finished" and rows and set(rows) == {("native", "project")}


def test_a_learned_forecaster_for_a_cpu_search_has_gpu_rows_to_fit_on(tmp_path):
    """`--forecaster learned --gpu cpu` on a fresh database: no CPU rows exist (CPU times are not
    GPU data), so the fit takes the shipped H100 rows, the searched problem left out, and says so."""
    from workbench import compose
    from workbench.problems.registry import load_problem_file
    from workbench.store import Store

    (tmp_path / "scaled_gelu.py").write_text(_docs_file())
    problem = load_problem_file(tmp_path / "scaled_gelu.py")
    said = []
    with Store(tmp_path / "db.sqlite") as store:
        problems, candidates, ms, key = compose._gpu_rows_for_cpu(store, problem, said.append)
    assert key == compose.CPU_STAND_IN_GPU and len(ms) > 100
    assert {m.hardware_key for m in ms} == {key} and problem.id not in {m.problem_id for m in ms}
    assert {m.candidate_id for m in ms} <= {c.id for c in candidates}
    assert "not GPU data" in said[0] and "shipped" in said[0]
