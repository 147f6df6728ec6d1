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


LIST_AND_DERIVED = """
import torch
import torch.nn as nn
batch_size = 16
features = 64
dim1 = 256
dim2 = dim1          # derived: follows dim1
input_shape = (features, dim1, dim2)


class Model(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


def get_inputs():
    return [torch.randn(batch_size, *input_shape)]


def get_init_inputs():
    return [input_shape]
"""

LIST_LITERAL = """
import torch
import torch.nn as nn
input_shape = (4096, 393216)


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(*input_shape)]


def get_init_inputs():
    return []
"""

TIED = """
import torch
import torch.nn as nn
batch_size = 8192
in_features = 4096
out_features = 4096   # must equal in_features: the output is added to the input


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return x + self.fc(x)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
"""


@pytest.mark.parametrize("source, name", [(LIST_AND_DERIVED, "derived"), (LIST_LITERAL, "list"), (TIED, "tied")])
def test_list_valued_derived_and_tied_sizes_are_reduced_too(source, name):
    from workbench.problems.cpu_sizes import MAX_BYTES, MAX_FLOPS

    cpu = load_source(source, name=name, cpu=True)
    nbytes, flops = cpu_footprint(cpu.module, name)
    assert cpu.cpu_sizes_source == "auto" and nbytes <= MAX_BYTES and flops <= MAX_FLOPS, (cpu.cpu_sizes, nbytes)
    torch.manual_seed(0)
    with torch.no_grad():
        out = cpu.Model(*cpu.get_init_inputs())(*cpu.get_inputs())
    assert out.numel() * 4 < MAX_BYTES
    if name == "derived":  # dim2 and input_shape follow dim1, so the norm's shape matches the input
        assert cpu.module.dim2 == cpu.module.dim1 < 256 and cpu.module.input_shape[1:] == (cpu.module.dim1,) * 2
    if name == "list":
        assert isinstance(cpu.cpu_sizes["input_shape"], tuple) and max(cpu.cpu_sizes["input_shape"]) < 393216
    if name == "tied":  # halved together: one alone breaks the residual
        assert cpu.module.in_features == cpu.module.out_features < 4096
