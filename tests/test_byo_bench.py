"""benchmarks/byo_bench.py --cpu: the smoke path runs a real search over a one-file corpus and
prints its metrics; it writes no results file."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # one sandboxed CPU search of budget 2: about a minute on a 2-core machine
def test_cpu_smoke(tmp_path):
    corpus = tmp_path / "corpus" / "level1"
    corpus.mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "problems" / "corpus" / "level1" / "19_ReLU.py", corpus)
    before = sorted((ROOT / "benchmarks" / "results").glob("byo-*.json"))
    out = subprocess.run([sys.executable, "benchmarks/byo_bench.py", "--cpu", "--corpus", str(tmp_path / "corpus"),
                          "--budget", "2", "--no-learned"], cwd=ROOT, capture_output=True, text=True,
                         timeout=900, env={"PYTHONPATH": str(ROOT), "TRITON_INTERPRET": "1",
                                           "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert out.returncode == 0, out.stderr[-3000:]
    doc = json.loads(out.stdout)
    m = doc["metrics"]
    assert m["problems"] == 1 and m["searched"] == 1 and m["with_correct_triton_candidate"] == 1
    assert m["identity_bin8_conf_max"] < 0.5
    row = doc["per_problem"]["L1/19_ReLU"]
    assert row["gpu_measurements"] == 2 and row["counts"] == "derived"
    assert sorted((ROOT / "benchmarks" / "results").glob("byo-*.json")) == before
