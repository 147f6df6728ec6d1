"""The kernel zoo: hand-written candidates in the KernelBench answer form.

Layout: `workbench/zoo/level{N}/{problem stem}/{variant}.py`, each file defining `ModelNew`.
Files named `cuda_*.py` are CUDA C++ (load_inline) and need a GPU.
"""
from __future__ import annotations

from pathlib import Path

from workbench.records import Candidate

ZOO_DIR = Path(__file__).parent


def zoo_files(problem_id: str | None = None) -> list[Path]:
    """Zoo candidate files, optionally for one problem id ("L1/01_softmax")."""
    if problem_id:
        level, stem = problem_id.split("/")
        return sorted((ZOO_DIR / f"level{level[1:]}" / stem).glob("*.py"))
    return sorted(p for p in ZOO_DIR.glob("level*/*/*.py") if not p.name.startswith("_"))


def problem_id_of(path: Path) -> str:
    return f"L{path.parent.parent.name[len('level'):]}/{path.parent.name}"


def zoo_candidates(problem_id: str | None = None) -> list[Candidate]:
    """Candidates for the zoo files, origin "zoo:<variant>"."""
    return [Candidate.from_source(problem_id_of(f), f.read_text(), origin=f"zoo:{f.stem}")
            for f in zoo_files(problem_id)]
