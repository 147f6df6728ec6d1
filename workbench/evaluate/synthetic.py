"""SYNTHETIC records for developing and testing forecasters without GPU data.

Everything here is made up: problems with invented sizes, Triton-looking candidate sources with
varied tile sizes, warps, stages, kernel counts, leftover torch ops and atomics, and speedups
drawn from a hidden formula over those knobs plus noise. Every record says so (problem origin
"synthetic", candidate origin "synthetic:...", measurement reason "synthetic", hardware name
"... (synthetic)"). Never write these into benchmarks/results or kernels_cache.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np

from workbench.records import Candidate, Hardware, Measurement, Problem, Status

SYNTHETIC_HARDWARE = {
    "h100": Hardware(key="h100", name="NVIDIA H100 (synthetic)", compute_capability="9.0",
                     sm_count=132, memory_mib=81559),
    "h200": Hardware(key="h200", name="NVIDIA H200 (synthetic)", compute_capability="9.0",
                     sm_count=132, memory_mib=143771),
}
_TORCH_OPS = ("torch.relu", "torch.exp", "torch.tanh", "torch.sigmoid", "torch.neg")


@dataclass
class SyntheticData:
    """Synthetic problems, candidates and measurements (one per candidate per GPU)."""

    problems: list[Problem] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    measurements: list[Measurement] = field(default_factory=list)

    def __iter__(self):
        return iter((self.problems, self.candidates, self.measurements))


def _problem(i: int, rng: np.random.Generator) -> Problem:
    ref_ops = int(rng.integers(1, 5))
    compute = bool(rng.random() < 0.35)
    dtype = str(rng.choice(["fp32", "bf16"]))
    n = int(2 ** rng.integers(20, 27))
    nbytes = float(n * (4 if dtype == "fp32" else 2) * 2)
    flops = float(n * (2 ** rng.integers(6, 11) if compute else 5))
    body = "\n".join(f"        x = {_TORCH_OPS[k % len(_TORCH_OPS)]}(x)" for k in range(ref_ops))
    source = (f'"""SYNTHETIC problem {i}: {ref_ops} elementwise op(s)."""\n'
              "import torch\nimport torch.nn as nn\n\n\n"
              "class Model(nn.Module):\n    def forward(self, x):\n"
              f"{body}\n        return x\n\n\n"
              f"def get_inputs():\n    return [torch.randn({n})]\n\n\n"
              "def get_init_inputs():\n    return []\n")
    return Problem(id=f"L9/syn_{i:03d}", level=9, name=f"syn_{i:03d}", source=source,
                   description="synthetic", category="synthetic", dtype=dtype,
                   tags=("synthetic",), flops=flops, bytes_moved=nbytes, origin="synthetic")


def _source(pid: str, j: int, knobs: dict) -> str:
    kernels = []
    for k in range(knobs["kernels"]):
        extra = ""
        if knobs["reduce"]:
            extra += "    s = tl.sum(x, axis=0)\n"
        if knobs["atomic"]:
            extra += "    tl.atomic_add(y_ptr, 0.0)\n"
        if knobs["loop"]:
            extra += "    for i in range(0, 4):\n        x = x * 1.0\n"
        kernels.append(
            f"@triton.jit\ndef _k{k}(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
            "    pid = tl.program_id(0)\n    offs = pid * BLOCK + tl.arange(0, BLOCK)\n"
            "    x = tl.load(x_ptr + offs, mask=offs < n)\n" + extra +
            "    tl.store(y_ptr + offs, x, mask=offs < n)\n")
    launches = "\n".join(
        f"        _k{k}[(triton.cdiv(n, {knobs['block']}),)](x, y, n, BLOCK={knobs['block']}, "
        f"num_warps={knobs['warps']}, num_stages={knobs['stages']})"
        for k in range(knobs["kernels"]))
    left = "\n".join(f"        y = {_TORCH_OPS[k]}(y)" for k in range(knobs["torch_left"]))
    return (f'"""SYNTHETIC candidate {j} for {pid} (generated for tests, never measured)."""\n'
            "import torch\nimport torch.nn as nn\nimport triton\nimport triton.language as tl\n\n\n"
            + "\n\n".join(kernels) +
            "\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
            "        y = torch.empty_like(x)\n        n = x.numel()\n"
            f"{launches}\n" + (left + "\n" if left else "") + "        return y\n")


def _log2_speedup(p: Problem, knobs: dict, gpu: str, offset: float, rng) -> float:
    ref_ops = p.source.count("torch.") - 2  # minus the randn and the nn import lines
    fusion = math.log2(max(ref_ops, 1) / (knobs["kernels"] + knobs["torch_left"]))
    warps = {1: -1.2, 2: -0.4, 4: 0.0, 8: 0.2, 16: -0.1}[knobs["warps"]]
    block = -0.25 * abs(math.log2(knobs["block"]) - 10)
    compute = p.flops / p.bytes_moved > 20
    stages = 0.15 * (knobs["stages"] - 2) if compute else 0.0
    gpu_shift = 0.15 if (gpu == "h200" and not compute) else 0.0
    return (offset + 0.6 * fusion + warps + block + stages - 0.5 * knobs["torch_left"]
            - 0.5 * knobs["atomic"] + gpu_shift + rng.normal(0, 0.35))


def make_synthetic(n_problems: int = 12, per_problem: int = 30, gpus=("h100",),
                   fail_rate: float = 0.15, seed: int = 0) -> SyntheticData:
    """Synthetic problems x candidates, each candidate measured on every GPU in `gpus`.

    Failures (compile_error / incorrect) are more likely for candidates with atomics or
    16 warps; `fail_rate` scales them. Candidates after the first of a problem have a parent.
    """
    rng = np.random.default_rng(seed)
    out = SyntheticData()
    for i in range(n_problems):
        p = _problem(i, rng)
        out.problems.append(p)
        offset = float(rng.normal(0, 0.4))
        prev: list[str] = []
        for j in range(per_problem):
            knobs = {"kernels": int(rng.integers(1, 4)), "block": int(2 ** rng.integers(5, 13)),
                     "warps": int(rng.choice([1, 2, 4, 8, 16])),
                     "stages": int(rng.integers(1, 5)), "torch_left": int(rng.integers(0, 3)),
                     "atomic": int(rng.random() < 0.2), "reduce": int(rng.random() < 0.4),
                     "loop": int(rng.random() < 0.3)}
            src = _source(p.id, j, knobs)
            parent = str(rng.choice(prev)) if prev else None
            c = Candidate.from_source(p.id, src, backend="triton", parent_id=parent,
                                      generation=0 if parent is None else 1,
                                      origin="synthetic:generator",
                                      created_at="2026-01-01T00:00:00Z")
            prev.append(c.id)
            out.candidates.append(c)
            p_fail = fail_rate * (1 + 2 * knobs["atomic"] + 2 * (knobs["warps"] == 16))
            failed = rng.random() < min(p_fail, 0.9)
            for gpu in gpus:
                hw = SYNTHETIC_HARDWARE[gpu]
                ref_ms = float(math.exp(rng.normal(-1.0, 0.8)))
                if failed:
                    out.measurements.append(Measurement(
                        candidate_id=c.id, problem_id=p.id, hardware_key=gpu,
                        status=Status.INCORRECT if knobs["atomic"] else Status.COMPILE_ERROR,
                        reason="synthetic", log="SYNTHETIC", hardware_json=json.dumps(hw.to_dict()),
                        hardware_fingerprint=hw.fingerprint, measured_at="2026-01-01T00:00:00Z"))
                    continue
                s = 2.0 ** _log2_speedup(p, knobs, gpu, offset, rng)
                out.measurements.append(Measurement(
                    candidate_id=c.id, problem_id=p.id, hardware_key=gpu, status=Status.OK,
                    reference_ms=ref_ms, candidate_ms=ref_ms / s, speedup=s, reason="synthetic",
                    log="SYNTHETIC", hardware_json=json.dumps(hw.to_dict()),
                    hardware_fingerprint=hw.fingerprint, measured_at="2026-01-01T00:00:00Z"))
    return out
