"""Fixture files for the executor tests.

Plain Python (no pytest import): benchmarks/executor_bench.py uses it on bare GPU images.

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


#: Short timing on the CPU: the tests check statuses, not CPU speed.
CPU_OPTIONS = {"cpu_timing": {"max_total_ms": 100, "max_runs": 5}}


def fault_batch(n_total: int = 100):
    """(problem, [(candidate, expected statuses)]): 20 faults (segfault, illegal address, GPU
    hang, GPU OOM, os._exit; 4 each) among honest softmax variants, 100 in all by default."""
    faults = {f.name: f for f in load_fixtures("faults") + load_fixtures("faults_gpu")}
    kinds = ["segfault", "illegal_address", "gpu_kernel_hang", "gpu_oom", "os_exit"]
    honest = [f for f in load_fixtures("honest") if f.problem.id == "L1/01_softmax"]
    problem = honest[0].problem
    jobs = []
    for i in range(20):
        f = faults[kinds[i % len(kinds)]]
        src = f.candidate.source + f"\n_VARIANT = {i}\n"  # distinct ids, same behaviour
        jobs.append((Candidate.from_source(problem.id, src, origin=f"fault:{f.name}"), f.expect))
    for i in range(n_total - 20):
        f = honest[i % len(honest)]
        src = f.candidate.source + f"\n_VARIANT = {i}\n"
        jobs.append((Candidate.from_source(problem.id, src, origin=f"honest:{f.name}"), frozenset({"ok"})))
    # Interleave so faults land among honest work.
    jobs = jobs[20:][::4] + jobs[:20] + [j for k, j in enumerate(jobs[20:]) if k % 4]
    return problem, jobs
