"""A candidate's module, executed from a real file at the sizes its problem was loaded at.

A KernelBench answer is usually the problem file rewritten: it keeps the file's size globals
(`batch_size = 10`) and may read them where the reference does (`torch.randn(num_layers,
batch_size, hidden)` in `__init__`, `x.view(batch_size, -1)` in `forward`). When the judge
loads the problem at other sizes (the CPU sizes, the second shape), the candidate's own copy of
those globals must follow, or an honest candidate computes at the full size while the reference
computes at the reduced one. So the candidate's module is executed with the problem's size
overrides (`LoadedProblem.overrides`), applied exactly as the loader applies them to the
reference (`workbench.problems.loaded.run_sized`), restricted to the names the candidate
itself assigns at module level (no name is added to its module).

The overrides are data the executor computed from the problem file and the job before any
candidate code ran (`worker.run_job`); the candidate's source only decides which of its own
names they reach. Nothing here catches the candidate's exceptions: the caller turns them into
a verdict.
"""
from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path
from typing import Any, Mapping

from workbench.problems.loaded import run_sized, sized_names


def candidate_sizes(source: str, overrides: Mapping[str, Any] | None) -> dict[str, Any]:
    """The overrides that apply to a candidate `source`: those of the names it assigns at
    module level."""
    if not overrides:
        return {}
    names = sized_names(source)
    return {k: v for k, v in overrides.items() if k in names}


def load_candidate(source: str, path: Path, module_name: str,
                   overrides: Mapping[str, Any] | None = None) -> types.ModuleType:
    """`source` (already written to `path`, which Triton reads a kernel's source from) executed
    as module `module_name` (registered in sys.modules, as an import would), with
    `candidate_sizes(source, overrides)` applied. Exceptions of the candidate propagate."""
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    run_sized(source, module, candidate_sizes(source, overrides), str(path))
    return module


def at_sizes(cand_mod: types.ModuleType, overrides: Mapping[str, Any] | None) -> types.ModuleType:
    """`cand_mod` itself when none of `overrides` applies to it or each already has its value
    there; else the file it was imported from (its `__file__`) executed again as a new module
    with them applied. For in-process checks of trusted code handed an imported module
    (`localcheck.check_correctness`): it runs whatever file the module names, so the executor
    never uses it (there the worker imports the candidate's source at each shape's sizes). A
    module without a source file is returned as it is."""
    path = getattr(cand_mod, "__file__", None)
    if not overrides or not path or not Path(path).is_file():
        return cand_mod
    source = Path(path).read_text()
    mine = candidate_sizes(source, overrides)
    if all(k in vars(cand_mod) and _same(vars(cand_mod)[k], v) for k, v in mine.items()):
        return cand_mod
    return load_candidate(source, Path(path), f"{cand_mod.__name__}__sized", mine)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b
