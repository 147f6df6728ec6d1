"""The KernelBench workflow of the README and docs/problems.md (import, seeds, search) on a small
KernelBench-layout folder, on the CPU path."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CUMSUM = '''import torch
import torch.nn as nn

batch_size = 64
dim = 96
CPU_SIZES = {"batch_size": 8, "dim": 40}


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=self.dim) * 0.5


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [1]
'''


def _wb(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), TRITON_INTERPRET="1", WORKBENCH_DB=str(tmp_path / "wb.sqlite"),
               WORKBENCH_CACHE_DIR=str(tmp_path / "cache"), HOME=str(tmp_path))
    return subprocess.run([sys.executable, "-m", "workbench.cli", *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=900)


def test_problems_seeds_lists_and_writes_a_problems_seeds(tmp_path, capsys):
    from workbench.cli import main

    f = tmp_path / "level1" / "7_Cumsum_Scale.py"
    f.parent.mkdir(parents=True)
    f.write_text(CUMSUM)
    assert main(["problems", "seeds", "--problem-file", str(f), "--out", str(tmp_path / "seeds")]) == 0
    out = capsys.readouterr().out
    assert "seed:generic" in out and "L1/7_Cumsum_Scale" in out
    (written,) = sorted((tmp_path / "seeds").iterdir())
    assert written.name == "generic_0.py" and "class ModelNew(_Reference)" in written.read_text()


@pytest.mark.slow  # a CPU search through the CLI: a few minutes on 2 cores
def test_import_seeds_and_search_as_the_docs_say(tmp_path):
    readme = (ROOT / "README.md").read_text()
    block = readme[readme.index("KernelBench in three commands"):]
    commands = re.search(r"```\n(.*?)```", block, re.S).group(1).splitlines()
    assert [c.split()[:3] for c in commands] == [["workbench", "problems", "import"],
                                                 ["workbench", "problems", "seeds"], ["workbench", "search", "--problem"]]
    level = tmp_path / "kb" / "level1"
    level.mkdir(parents=True)
    (level / "7_Cumsum_Scale.py").write_text(CUMSUM)
    r = _wb(tmp_path, "problems", "import", str(tmp_path / "kb"))
    assert r.returncode == 0, r.stderr[-2000:]
    r = _wb(tmp_path, "problems", "seeds", "L1/7_Cumsum_Scale", "--out", "seeds")
    assert r.returncode == 0, r.stderr[-2000:]
    assert "generic" in r.stdout and (tmp_path / "seeds").is_dir()
    written = sorted(p.name for p in (tmp_path / "seeds").iterdir())
    assert written and all(n.endswith(".py") for n in written)
    r = _wb(tmp_path, "search", "--problem", "L1/7_Cumsum_Scale", "--gpu", "cpu", "--budget", "3", "--no-progress")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert re.search(r"GPU measurements used:\s+3 / 3", r.stdout), r.stdout
