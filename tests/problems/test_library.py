"""Every built-in problem runs on the CPU at its reduced size, finite and deterministic."""
from __future__ import annotations

import pytest
import torch

from workbench.problems import list_problems, load_source

PROBLEMS = list_problems()
#: Categories whose operation does no arithmetic (a gather, a layout change): flops() is 0.
DATA_MOVEMENT = ("gather", "layout")


def _flat(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


def test_library_size_and_levels():
    by_level = {lvl: [p for p in PROBLEMS if p.level == lvl] for lvl in (1, 2, 3)}
    assert len(PROBLEMS) >= 60
    assert len(by_level[1]) >= 30 and len(by_level[2]) >= 20 and len(by_level[3]) >= 10


def test_ids_are_unique():
    ids = [p.id for p in PROBLEMS]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("problem", PROBLEMS, ids=[p.id for p in PROBLEMS])
def test_metadata(problem):
    assert problem.description, "a problem file states what it computes in its docstring"
    assert problem.category and problem.dtype in ("fp32", "bf16", "fp16", "mixed")
    assert problem.tags
    assert problem.bytes_moved > 0
    if problem.category in DATA_MOVEMENT:
        assert problem.flops == 0 and "memory-bound" in problem.tags
    else:
        assert problem.flops > 0, "flops() counts the arithmetic at full size"
    assert "CPU_SIZES" in problem.source


@pytest.mark.parametrize("problem", PROBLEMS, ids=[p.id for p in PROBLEMS])
def test_runs_on_cpu_finite_and_deterministic(problem):
    outs = []
    for _ in range(2):
        lp = load_source(problem.source, name=problem.id, cpu=True)
        torch.manual_seed(0)
        model = lp.Model(*lp.get_init_inputs()).eval()
        torch.manual_seed(1)
        inputs = lp.get_inputs()
        with torch.no_grad():
            outs.append(_flat(model(*inputs)))
    for a, b in zip(*outs):
        assert isinstance(a, torch.Tensor)
        if a.is_floating_point():
            assert torch.isfinite(a).all(), f"{problem.id}: non-finite output at CPU size"
        assert torch.equal(a, b), f"{problem.id}: not deterministic for a fixed seed"
    # The reduced size really is reduced: full-size inputs would not be built here.
    full = load_source(problem.source, name=problem.id)
    assert full.sizes != lp.sizes
