"""Every Triton zoo candidate is correct against its reference on the CPU (Triton interpreter).

Uses the executor's own correctness check (inputs checked for mutation, outputs for aliasing
and degeneracy, the candidate called on the seed's inputs, on inputs with one element changed and
on fresh inputs), in-process for speed, with one seed: these are honest kernels, and the checks
that only a second seed adds (a call right after a reference run whose output was freed and
poisoned) are tested on cheating candidates in tests/execution, as is the sandboxed path.
"""
from __future__ import annotations

import ast
import collections
import importlib.util
import re
import sys

import pytest
import torch

from workbench.execution.worker import Verdict, check_correctness
from workbench.problems import get_problem, list_problems, load_source
from workbench.zoo import zoo_kernels

KERNELS = zoo_kernels()
TRITON_KERNELS = [k for k in KERNELS if k.backend != "cuda"]
CUDA_KERNELS = [k for k in KERNELS if k.backend == "cuda"]


def _import(kernel, folder):
    """The rendered variant as a module imported from a file (Triton's JIT reads its source)."""
    name = "zoo_" + kernel.name.replace("/", "_")
    path = folder / f"{name}.py"
    path.write_text(kernel.source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_every_zoo_folder_names_a_problem():
    ids = {p.id for p in list_problems()}
    assert {k.problem_id for k in KERNELS} <= ids


def test_every_problem_has_a_triton_candidate():
    covered = {k.problem_id for k in TRITON_KERNELS}
    missing = sorted({p.id for p in list_problems()} - covered)
    assert not missing, f"problems without a zoo kernel: {missing}"


@pytest.mark.parametrize("kernel", TRITON_KERNELS, ids=[k.name for k in TRITON_KERNELS])
def test_zoo_candidate_correct_on_cpu(kernel, tmp_path):
    p = get_problem(kernel.problem_id)
    lp = load_source(p.source, name=p.id, cpu=True)
    mod = _import(kernel, tmp_path)
    try:
        check_correctness(lp.module, mod, "cpu", [0], int(max(lp.sizes.values())), "cpu size")
    except Verdict as v:
        pytest.fail(f"{v.status}: {v.reason}")


@pytest.mark.parametrize("kernel", KERNELS, ids=[k.name for k in KERNELS])
def test_zoo_file_form(kernel):
    """KernelBench answer form: a docstring saying what the variant does, and `ModelNew`."""
    tree = ast.parse(kernel.source)
    assert (ast.get_docstring(tree) or "").strip(), f"{kernel.name}: needs a docstring describing the variant"
    assert any(isinstance(n, ast.ClassDef) and n.name == "ModelNew" for n in tree.body)


def test_level1_zoo_breadth():
    """Level 1 has a spread of variants per problem and CUDA C++ candidates for several problems."""
    triton_per_problem = collections.Counter(k.problem_id for k in TRITON_KERNELS if k.problem_id.startswith("L1/"))
    wide = [pid for pid, n in triton_per_problem.items() if 5 <= n <= 15]
    assert len(wide) >= 22, f"only {len(wide)} level-1 problems have 5-15 Triton candidates"
    cuda_problems = {k.problem_id for k in CUDA_KERNELS if k.problem_id.startswith("L1/")}
    assert len(cuda_problems) >= 6, f"CUDA C++ candidates for only {sorted(cuda_problems)}"
    slow = {k.problem_id for k in TRITON_KERNELS if k.variant.startswith("slow_") and k.problem_id.startswith("L1/")}
    assert len(slow) >= 15, "deliberately slow variants populate the low speedup bins"


def test_zoo_candidates_are_distinct():
    """No two variants of one problem are the same candidate (same normalised source)."""
    from workbench.zoo import zoo_candidates

    seen: dict[tuple[str, str], str] = {}
    for c in zoo_candidates():
        key = (c.problem_id, c.id)
        assert key not in seen, f"{c.origin} duplicates {seen[key]}"
        seen[key] = c.origin


def test_cuda_candidates_follow_the_rules():
    """Static checks on CUDA C++ variants (they cannot run without a GPU): a unique extension name,
    launches on the current stream, and a launch check after every launch."""
    names = []
    for k in CUDA_KERNELS:
        src = k.source
        assert "load_inline" in src, k.name
        m = re.search(r'load_inline\(\s*name="([^"]+)"', src)
        assert m, f"{k.name}: load_inline needs a literal name"
        names.append(m.group(1))
        launches = len(re.findall(r">>>\(", src))
        assert launches >= 1, k.name
        assert src.count("getCurrentCUDAStream()") >= 1, f"{k.name}: launch on the current stream"
        assert re.findall(r"<<<[^>]*getCurrentCUDAStream\(\)|<<<[^>]*\bstream>>>", src), \
            f"{k.name}: every launch passes the current stream"
        assert src.count("C10_CUDA_KERNEL_LAUNCH_CHECK()") >= 1, f"{k.name}: check launches"
        assert "try:" not in src, f"{k.name}: no try/except fallbacks"
    assert len(names) == len(set(names)), "every CUDA variant needs its own load_inline name"


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("kernel", CUDA_KERNELS, ids=[k.name for k in CUDA_KERNELS])
def test_cuda_candidate_correct_on_gpu(kernel, tmp_path):
    p = get_problem(kernel.problem_id)
    lp = load_source(p.source, name=p.id, cpu=True)
    mod = _import(kernel, tmp_path)
    try:
        check_correctness(lp.module, mod, "cuda", [0, 1], int(max(lp.sizes.values())), "cpu size")
    except Verdict as v:
        pytest.fail(f"{v.status}: {v.reason}")
