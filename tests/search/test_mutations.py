"""Mutation operators on the real zoo files: valid children, refusals with reasons, determinism,
and a couple of children that still run correctly on the CPU (Triton interpreter)."""
from __future__ import annotations

import ast
import random

import pytest

from workbench.problems import get_problem, load_source
from workbench.records import Candidate
from workbench.search.mutations import OPS, MutationRefused, mutate, mutate_source, neighbourhood, validate_source
from workbench.zoo import zoo_candidates

# Every 3rd Triton zoo file (a fixed, varied subset: all kernel families appear) keeps this fast.
ZOO = [c for c in zoo_candidates() if c.backend != "cuda"][::3]


def _by_origin(problem_id: str, stem: str) -> Candidate:
    return next(c for c in zoo_candidates(problem_id) if c.origin == f"zoo:{stem}")


def _defines_modelnew(src: str) -> bool:
    return any(isinstance(n, ast.ClassDef) and n.name == "ModelNew" for n in ast.parse(src).body)


@pytest.mark.parametrize("op", OPS)
def test_every_op_gives_valid_child_or_reason_on_every_zoo_file(op):
    applied = 0
    for parent in ZOO:
        out = mutate(parent, op, random.Random(7))
        if isinstance(out, MutationRefused):
            assert out.op == op and len(out.reason) > 10
            continue
        applied += 1
        assert _defines_modelnew(out.source)
        assert out.id != parent.id
        assert out.parent_id == parent.id and out.generation == parent.generation + 1
        assert out.origin.startswith(f"mutation:{op}:")
        assert out.problem_id == parent.problem_id
    assert applied > 0, f"{op} applies to no zoo file"


def test_runtime_block_value_is_refused_with_reason():
    parent = _by_origin("L1/01_softmax", "one_pass_row")  # BLOCK = next_power_of_2(n): must stay >= n
    out = mutate(parent, "block", random.Random(0))
    assert isinstance(out, MutationRefused) and "run time" in out.reason


def test_block_change_is_power_of_two_neighbour():
    parent = _by_origin("L1/02_relu", "flat_b1024_w4")
    for seed in range(6):
        child = mutate(parent, "block", random.Random(seed))
        assert not isinstance(child, MutationRefused)
        old, new = child.origin.rsplit(":", 1)[-1].split("->")
        assert int(new) in (int(old) // 2, int(old) * 2)
        assert f"{int(new)}" in child.source


def test_mutation_is_deterministic_in_the_rng():
    parent = _by_origin("L1/14_matmul_square_fp32", "tile64x64_k32_w4_s2")
    a = [mutate(parent, op, random.Random(3)) for op in OPS]
    b = [mutate(parent, op, random.Random(3)) for op in OPS]
    assert [getattr(x, "id", x) for x in a] == [getattr(x, "id", x) for x in b]


def test_broken_parent_and_unknown_op():
    bad = Candidate.from_source("L1/01_softmax", "def broken(:\n")
    assert isinstance(mutate(bad, "num_warps", random.Random(0)), MutationRefused)
    with pytest.raises(ValueError):
        mutate_source("x = 1\n", "no_such_op", random.Random(0))


def test_validate_source():
    assert validate_source("class ModelNew:\n    pass\n") is None
    assert "ModelNew" in validate_source("class Model:\n    pass\n")
    assert "syntax" in validate_source("class ModelNew(:\n")


def test_neighbourhood_distinct_deterministic_and_excludes():
    parent = _by_origin("L1/14_matmul_square_fp32", "tile64x64_k32_w4_s2")
    kids = neighbourhood(parent, 12, seed=5)
    assert len(kids) == 12 and len({k.id for k in kids}) == 12 and parent.id not in {k.id for k in kids}
    assert [k.id for k in kids] == [k.id for k in neighbourhood(parent, 12, seed=5)]
    assert [k.id for k in kids] != [k.id for k in neighbourhood(parent, 12, seed=6)]
    again = neighbourhood(parent, 6, seed=5, exclude={k.id for k in kids[:3]})
    assert not {k.id for k in again} & {k.id for k in kids[:3]}
    assert all(_defines_modelnew(k.source) for k in kids)


def test_neighbourhoods_do_not_depend_on_what_the_caches_hold():
    """The parse, id, validation and operator-option caches are pure: a neighbourhood (and a
    second generation from it) is the same with every cache cold as with them warm."""
    from workbench.records import candidate_id
    from workbench.search import mutations

    def clear():
        for f in (mutations._parsed, mutations._applicable, validate_source, candidate_id):
            f.cache_clear()

    parents = [c for pid in ("L1/01_softmax", "L2/01_linear_bias_relu") for c in zoo_candidates(pid)
               if c.backend == "triton"][:3]

    def run():
        out = []
        for c in parents:
            kids = neighbourhood(c, 12, seed=5)
            out += [(k.id, k.origin, k.source) for k in kids]
            out += [(k.id, k.origin) for k in neighbourhood(kids[0], 8, seed=6)] if kids else []
        return out

    clear()
    cold = run()
    warm = run()  # every parse and option list now comes from the caches
    assert warm == cold and len(cold) > 30
    clear()
    assert run() == cold


def test_neighbourhood_of_unmutable_source_is_empty():
    plain = Candidate.from_source("L1/02_relu", "import torch\nclass ModelNew(torch.nn.Module):\n"
                                  "    def forward(self, x):\n        return torch.relu(x)\n")
    assert neighbourhood(plain, 5, seed=0) == []


def _run_correct_on_cpu(problem_id: str, child: Candidate) -> None:
    from workbench.execution.worker import Verdict, check_correctness

    import importlib.util
    import sys
    import tempfile
    from pathlib import Path

    p = get_problem(problem_id)
    lp = load_source(p.source, name=p.id, cpu=True)
    path = Path(tempfile.mkdtemp()) / f"child_{child.id}.py"
    path.write_text(child.source)
    spec = importlib.util.spec_from_file_location(f"child_{child.id}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    try:
        check_correctness(lp.module, mod, "cpu", [0], int(max(lp.sizes.values())), "cpu size")
    except Verdict as v:
        pytest.fail(f"{child.origin}: {v.status}: {v.reason}")


@pytest.mark.parametrize("problem_id,stem,op,seed", [
    ("L1/02_relu", "flat_b1024_w4", "block", 0),
    ("L1/01_softmax", "one_pass_row", "swap_order", 1),
    ("L1/14_matmul_square_fp32", "tile64x64_k32_w4_s2", "unroll", 0),
    ("L1/14_matmul_square_fp32", "split_k4_two_stage", "dot_precision", 0),
])
def test_children_run_correctly_on_cpu(problem_id, stem, op, seed):
    child = mutate(_by_origin(problem_id, stem), op, random.Random(seed))
    assert not isinstance(child, MutationRefused), child
    _run_correct_on_cpu(problem_id, child)


TWO_KERNELS = '''import triton
import triton.language as tl


@triton.jit
def rnn(h, w0, w1, a0, a1):
    a0 = tl.dot(h, w0, a0, input_precision="ieee")
    a1 = tl.dot(h, w1, a1, input_precision="ieee")


@triton.jit
def half(a, b):
    return tl.dot(a, b)


def host(a, b):
    return tl.dot(a, b, input_precision="ieee")   # not in a kernel: left alone


class ModelNew:
    pass
'''


def test_dot_precision_switches_every_fp32_dot_of_one_kernel_and_back():
    out = mutate_source(TWO_KERNELS, "dot_precision", random.Random(0))
    assert not isinstance(out, MutationRefused), out
    child, details = out
    assert details == "rnn:ieee->tf32x3"
    assert child.count('input_precision="tf32x3"') == 2 and child.count('input_precision="ieee"') == 1
    assert "return tl.dot(a, b)\n" in child           # a dot without the keyword is not touched
    back, details = mutate_source(child, "dot_precision", random.Random(0))
    assert back == TWO_KERNELS and details == "rnn:tf32x3->ieee"
    no_site = TWO_KERNELS.replace('input_precision="ieee"', 'input_precision="tf32"')
    refused = mutate_source(no_site, "dot_precision", random.Random(0))
    assert isinstance(refused, MutationRefused) and "input_precision" in refused.reason


def test_applicable_ops_are_the_ops_that_give_a_child_with_a_new_id():
    # applicable_ops skips the content-id comparison (an edit of code changes it): the same ops
    # as the full check on every file here.
    from workbench.search.mutations import applicable_ops

    for parent in ZOO:
        full = [op for op in OPS if not isinstance(mutate_source(parent.source, op, random.Random(0)), MutationRefused)]
        assert applicable_ops(parent) == full, parent.origin
