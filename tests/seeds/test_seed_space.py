"""A seed's launch parameters as a kernel Family: what becomes a parameter, its values, rendering,
neighbourhoods, and the seed's own point."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.families import FamilyError
from workbench.problems import load_file
from workbench.records import Candidate
from workbench.search.mutations import validate_source
from workbench.seeds.inductor import rewrite
from workbench.seeds.space import MAX_TILE, launch_sites, seed_family

FIXTURE = Path(__file__).parent / "fixtures" / "inductor" / "L2_1_Linear_ReLU.json"
CORPUS = Path(__file__).parents[1] / "problems" / "corpus"


def _inductor_seed() -> Candidate:
    fx = json.loads(FIXTURE.read_text())
    problem = load_file(CORPUS / fx["corpus_file"], with_counts=False)
    src = rewrite(problem, fx["code"], fx["arg_exprs"], fx["outputs"], fx["configs"])
    return Candidate.from_source(problem.id, src, origin="seed:inductor")


def test_an_inductor_seeds_autotuned_config_is_its_space():
    seed = _inductor_seed()
    family, point = seed_family(seed)
    names = family.param_names
    assert any(n.endswith(".XBLOCK") for n in names) and any(n.endswith(".num_warps") for n in names)
    xblock = next(p for p in family.params if p.name.endswith(".XBLOCK"))
    v = dict(zip(names, point))[xblock.name]
    assert xblock.values == tuple(sorted({v // 4, v // 2, v, v * 2, v * 4} & set(xblock.values)))
    # The seed's point renders the seed's kernels; another point changes only its literals.
    assert family.render(point).endswith(seed.source)
    other = family.neighbours(point, max_distance=1)[0][0]
    src = family.render(other)
    assert validate_source(src) is None and src != family.render(point)
    assert len(family.points()) >= 8


def test_tf32_is_a_parameter_only_when_the_tolerance_admits_it():
    src = '''import torch
import triton
import triton.language as tl

@triton.jit
def _mm(a_ptr, TF32: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pass

class ModelNew(torch.nn.Module):
    def forward(self, a):
        _mm[(1,)](a, TF32=False, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, num_warps=4)
        return a
'''
    c = Candidate.from_source("L0/x", src, origin="lowering:matmul")
    assert "_mm.TF32" not in seed_family(c)[0].param_names
    family, point = seed_family(c, tf32=True)
    assert "_mm.TF32" in family.param_names
    bk = next(p for p in family.params if p.name == "_mm.BLOCK_K")
    assert min(bk.values) >= 16  # tl.dot operands
    tiles = [dict(zip(family.param_names, pt)) for pt in family.points()]
    assert all(d["_mm.BLOCK_M"] * d["_mm.BLOCK_N"] * d["_mm.BLOCK_K"] <= MAX_TILE for d in tiles)


def test_kernels_launched_inside_jit_code_and_computed_sizes_are_not_sites():
    src = '''import triton
import triton.language as tl

class ModelNew:
    def forward(self, x, n):
        _k[(1,)](x, BLOCK=triton.next_power_of_2(n))
        return x
'''
    assert launch_sites(src) == []
    with pytest.raises(FamilyError, match="no literal launch parameter"):
        seed_family(Candidate.from_source("L0/x", src, origin="seed:generic"))
