"""Reduced CPU sizes chosen automatically for files without CPU_SIZES."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from workbench.cli import main
from workbench.problems import load_dir, load_source
from workbench.problems.cpu_sizes import cpu_footprint

CORPUS = Path(__file__).parent / "corpus"
GB = 2**30


def _corpus():
    problems, errors = load_dir(CORPUS)
    assert not errors and len(problems) >= 30
    return problems


@pytest.mark.parametrize("problem", _corpus(), ids=lambda p: p.id)
def test_every_corpus_problem_fits_under_a_gigabyte_on_cpu(problem):
    full = load_source(problem.source, name=problem.id)
    cpu = load_source(problem.source, name=problem.id, cpu=True)
    nbytes, _ = cpu_footprint(cpu.module, problem.id)
    assert nbytes < GB
    full_bytes, _ = cpu_footprint(full.module, problem.id)
    if full_bytes > 16 * 2**20:
        assert cpu.cpu_sizes_source == "auto" and cpu.cpu_sizes and nbytes < full_bytes
    for k, v in cpu.cpu_sizes.items():
        assert v < full.sizes[k]
    # The reference really runs at the chosen sizes.
    torch.manual_seed(0)
    with torch.no_grad():
        cpu.Model(*cpu.get_init_inputs())(*cpu.get_inputs())


def test_the_files_own_cpu_sizes_override_the_choice(tmp_path, capsys):
    src = (CORPUS / "level1" / "1_ReLU.py").read_text()
    auto = load_source(src, name="a", cpu=True)
    assert auto.cpu_sizes_source == "auto" and auto.get_inputs()[0].numel() < 64 * 131072
    mine = load_source(src + "\nCPU_SIZES = {'batch_size': 3, 'dim': 5}\n", name="b", cpu=True)
    assert mine.cpu_sizes_source == "file" and tuple(mine.get_inputs()[0].shape) == (3, 5)
    f = tmp_path / "relu.py"
    f.write_text(src)
    assert main(["problems", "show", "--problem-file", str(f)]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("CPU sizes:"))
    assert f"dim={auto.cpu_sizes['dim']}" in line and "automatically" in line
