"""Fixture files for the executor tests.

Each file under fixtures/{cheats,faults,faults_gpu,honest}/ is a candidate whose docstring
names its problem (`PROBLEM: L1/01_softmax`) and the statuses it may end with
(`EXPECT: cheat_suspected, incorrect`); honest files expect `ok`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

from workbench.problems import get_problem
from workbench.records import Candidate, Problem

FIXTURES = Path(__file__).parent / "fixtures"


@dataclass(frozen=True)
class Fixture:
    name: str
    problem: Problem
    candidate: Candidate
    expect: frozenset[str]


def load_fixtures(kind: str) -> list[Fixture]:
    out = []
    for path in sorted((FIXTURES / kind).glob("*.py")):
        src = path.read_text()
        pid = re.search(r"^PROBLEM:\s*(\S+)", src, re.M)
        exp = re.search(r"^EXPECT:\s*(.+)$", src, re.M)
        assert pid, f"{path}: no PROBLEM: line"
        expect = frozenset(s.strip() for s in exp.group(1).split(",")) if exp else frozenset({"ok"})
        problem = get_problem(pid.group(1))
        out.append(Fixture(path.stem, problem, Candidate.from_source(problem.id, src, origin=f"test:{kind}"),
                           expect))
    return out


needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

#: Short timing on the CPU: the tests check statuses, not CPU speed.
CPU_OPTIONS = {"cpu_timing": {"max_total_ms": 100, "max_runs": 5}}
