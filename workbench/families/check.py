"""In-process correctness of rendered family points on the CPU (Triton interpreter).

For tests and for authoring templates only: a rendered point is the workbench's own code, so
it is imported into this process (the executor, which treats every candidate as hostile,
measures points in its sandbox). The problem runs at its `CPU_SIZES`.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Sequence

from workbench.families.base import Family


def check_points_cpu(family: Family, points: Sequence[tuple], seed: int = 0) -> dict[str, str]:
    """Run each point against the reference on the CPU interpreter; returns point key -> why it
    failed ("" when its outputs match within the problem's tolerance)."""
    os.environ["TRITON_INTERPRET"] = "1"
    import torch

    from workbench.execution.correctness import compare_outputs, is_matmul_like
    from workbench.execution.worker import _import_candidate, copy_state
    from workbench.problems import get_problem, load_source

    problem = get_problem(family.problem_id)
    mod = load_source(problem.source, name=problem.id, cpu=True)
    reduced_k = int(max(mod.sizes.values(), default=1))
    out: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="wb_family_check_") as tmp:
        for pt in points:
            cand = family.candidate(pt)
            key = family.key(pt)
            torch.manual_seed(seed)
            ref = mod.module.Model(*mod.get_init_inputs())
            inputs = mod.get_inputs()
            try:
                cmod = _import_candidate(cand.source, Path(tmp), cand.id, mod.overrides)
                new = cmod.ModelNew(*mod.get_init_inputs())
                copy_state(ref, new)
                with torch.no_grad():
                    want = ref(*[x.clone() for x in inputs])
                    got = new(*[x.clone() for x in inputs])
            except Exception as e:  # noqa: BLE001 - a failing point is reported, not raised
                out[key] = f"{type(e).__name__}: {e}"
                continue
            ok, why = compare_outputs(got, want, reduced_k=reduced_k, matmul_like=is_matmul_like(problem.category, problem.tags))
            out[key] = "" if ok else why
    return out
