"""Every Triton zoo candidate is correct against its reference on the CPU (Triton interpreter).

Uses the executor's own correctness check (several seeds, inputs checked for mutation, outputs
for aliasing and degeneracy), in-process for speed; the sandboxed path is tested in
tests/execution.
"""
from __future__ import annotations

import importlib.util
import sys

import pytest

from workbench.execution.worker import Verdict, check_correctness
from workbench.problems import get_problem, list_problems, load_source
from workbench.zoo import problem_id_of, zoo_files

FILES = [f for f in zoo_files() if not f.name.startswith("cuda_")]


def _import(path):
    name = f"zoo_{path.parent.parent.name}_{path.parent.name}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_every_zoo_folder_names_a_problem():
    ids = {p.id for p in list_problems()}
    assert {problem_id_of(f) for f in zoo_files()} <= ids


def test_every_problem_has_a_triton_candidate():
    covered = {problem_id_of(f) for f in FILES}
    missing = sorted({p.id for p in list_problems()} - covered)
    assert not missing, f"problems without a zoo kernel: {missing}"


@pytest.mark.parametrize("path", FILES, ids=[f"{problem_id_of(f)}/{f.stem}" for f in FILES])
def test_zoo_candidate_correct_on_cpu(path):
    p = get_problem(problem_id_of(path))
    lp = load_source(p.source, name=p.id, cpu=True)
    mod = _import(path)
    try:
        check_correctness(lp.module, mod, "cpu", [0, 1], int(max(lp.sizes.values())), "cpu size")
    except Verdict as v:
        pytest.fail(f"{v.status}: {v.reason}")
