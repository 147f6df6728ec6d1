"""The benchmark's contract (precision, tolerance, trials): its values, and its way from the run to
the verdict through the real CPU executor, recorded with each measurement."""
from __future__ import annotations

import os

import pytest
import torch

from workbench.cli import main
from workbench.errors import ConfigError
from workbench.problems import load_source
from workbench.problems.contract import Contract
from workbench.records import Problem

os.environ.setdefault("TRITON_INTERPRET", "1")

PROBLEM = '''"""y = 2 x + b over a (rows, cols) matrix, b a parameter."""
import torch
import torch.nn as nn
rows = 24
cols = 40


class Model(nn.Module):
    def __init__(self, cols):
        super().__init__()
        self.b = nn.Parameter(torch.randn(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return 2.0 * x + self.b


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return [cols]
'''

# A Triton candidate off by OFFSET everywhere (an absolute error of 1e-3: over 1e-4, under 1e-2).
CANDIDATE = '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _affine(x_ptr, b_ptr, y_ptr, n, cols, OFFSET: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m)
    b = tl.load(b_ptr + i % cols, mask=m)
    tl.store(y_ptr + i, 2.0 * x + b + OFFSET, mask=m)


class ModelNew(nn.Module):
    def __init__(self, cols):
        super().__init__()
        self.b = nn.Parameter(torch.randn(cols))

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        _affine[(triton.cdiv(n, 256),)](x, self.b, y, n, x.shape[-1], OFFSET=OFFSET_VALUE, BLOCK=256)
        return y
'''


def _problem() -> Problem:
    return Problem(id="L0/affine", level=0, name="affine", source=PROBLEM)


def _candidate(offset: float):
    from workbench.records import Candidate

    return Candidate.from_source("L0/affine", CANDIDATE.replace("OFFSET_VALUE", repr(offset)))


def test_contract_values_and_defaults():
    assert (Contract().precision, Contract().tolerance) == ("native", "project")
    assert Contract().atol_rtol(torch.float32) is None  # the project's per-dtype rules
    assert Contract("fp32").atol_rtol() == (1e-4, 1e-4)
    assert Contract("fp16").tolerance == "kernelbench" and Contract("fp16").atol_rtol() == (1e-2, 1e-2)
    assert Contract("bf16").atol_rtol(torch.float32) == (1e-2, 1e-2)  # by the run's precision
    assert Contract("fp32", "legacy").atol_rtol() == (1e-2, 1e-2)
    assert Contract("native", "kernelbench").atol_rtol(torch.float16) == (1e-2, 1e-2)
    assert Contract("native", "kernelbench").atol_rtol(torch.float32) == (1e-4, 1e-4)
    assert Contract("fp32", "1e-3").atol_rtol() == (1e-3, 1e-3)
    assert Contract("fp16", trials=5).options() == {"precision": "fp16", "tolerance": "kernelbench",
                                                    "seeds": [0, 1, 2, 3, 4]}
    assert Contract.from_options(Contract("fp16", trials=5).options()) == Contract("fp16", trials=5)
    assert Contract.from_dict(Contract("bf16", "legacy").to_dict()) == Contract("bf16", "legacy")
    for bad in (dict(precision="fp8"), dict(tolerance="loose"), dict(tolerance="2"), dict(trials=0)):
        with pytest.raises(ConfigError):
            Contract(**bad)
    assert "atol = rtol = 0.01 (kernelbench)" in Contract("fp16").describe()


def test_a_problem_loaded_at_a_precision_casts_model_and_inputs():
    lp = load_source(PROBLEM, name="affine", precision="bf16")
    model = lp.Model(*lp.get_init_inputs())
    (x,) = lp.get_inputs()
    assert model.b.dtype == torch.bfloat16 and x.dtype == torch.bfloat16
    assert model(x).dtype == torch.bfloat16
    native = load_source(PROBLEM, name="affine")
    assert native.Model(*native.get_init_inputs()).b.dtype == torch.float32
    assert Contract("fp16").cast_inputs([torch.zeros(2), torch.arange(3), 4])[1].dtype == torch.int64


def test_the_tolerance_travels_from_the_run_to_the_verdict():
    """One candidate off by 1e-3, through the real CPU executor: correct at the legacy 1e-2,
    incorrect at the benchmark's fp32 1e-4, and an exact one correct at both; each record says
    which contract judged it. The worker and the executor's own comparison both use it."""
    from workbench.compose import make_executor

    problem, off, exact = _problem(), _candidate(1e-3), _candidate(0.0)
    got = {}
    for contract in (Contract("fp32", "legacy", trials=2), Contract("fp32", "kernelbench", trials=2)):
        with make_executor("cpu", contract=contract, workers=2, options={"time": False}) as ex:
            got[contract.tolerance] = ex.measure(problem, [off, exact])
    (legacy_off, legacy_exact), (kb_off, kb_exact) = got["legacy"], got["kernelbench"]
    assert legacy_off.ok and legacy_exact.ok and kb_exact.ok, (legacy_off.reason, legacy_exact.reason, kb_exact.reason)
    assert kb_off.status.value == "incorrect" and "atol=0.0001, rtol=0.0001" in kb_off.reason, kb_off.reason
    for m, tol in ((legacy_off, "legacy"), (kb_off, "kernelbench"), (kb_exact, "kernelbench")):
        assert (m.precision, m.tolerance, m.trials) == ("fp32", tol, 2)


def test_a_run_at_fp16_casts_what_the_candidate_sees():
    """At fp16 the reference and the inputs are half precision: a candidate written for fp32
    (allocating its output in float32) is incorrect there and correct as written."""
    from workbench.compose import make_executor

    from workbench.records import Candidate

    fp32_only = Candidate.from_source("L0/affine", _candidate(0.0).source.replace(
        "y = torch.empty_like(x)", "y = torch.empty(x.shape, dtype=torch.float32)"))
    with make_executor("cpu", contract=Contract("fp16"), workers=2, options={"time": False}) as ex:
        half, honest = ex.measure(_problem(), [fp32_only, _candidate(0.0)])
    assert half.status.value == "incorrect" and "dtype torch.float32 != reference torch.float16" in half.reason, \
        half.reason
    assert honest.ok, honest.reason
    assert (half.precision, half.tolerance, honest.precision) == ("fp16", "kernelbench", "fp16")


def test_problems_show_prints_the_contract(tmp_path, capsys):
    f = tmp_path / "affine.py"
    f.write_text(PROBLEM)
    assert main(["problems", "show", "--problem-file", str(f), "--precision", "fp16", "--trials", "5"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("contract:"))
    assert "fp16" in line and "atol = rtol = 0.01 (kernelbench)" in line and "5 trials" in line
    assert main(["problems", "show", "--problem-file", str(f)]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("contract:"))
    assert "native" in line and "project" in line


def test_replay_answers_only_under_the_runs_contract():
    from workbench.compose import make_executor
    from workbench.execution.executors import CacheExecutor
    from workbench.records import Measurement, Status

    problem = _problem()
    cand = _candidate(0.0)
    native = Measurement(candidate_id=cand.id, problem_id=problem.id, hardware_key="h100", status=Status.OK,
                         reference_ms=2.0, candidate_ms=1.0, speedup=2.0)
    fp16 = native.replace(precision="fp16", tolerance="kernelbench", speedup=3.0)
    assert CacheExecutor([native, fp16], "h100").measure(problem, [cand])[0].speedup == 2.0
    assert CacheExecutor([native, fp16], "h100", Contract("fp16")).measure(problem, [cand])[0].speedup == 3.0
    with pytest.raises(ConfigError, match="under the contract"):
        CacheExecutor([native], "h100", Contract("bf16"))
    # A live executor gets the contract in its job options.
    with make_executor("cpu", contract=Contract("bf16", "legacy", trials=4)) as ex:
        assert (ex._options.precision, ex._options.tolerance, ex._options.seeds) == ("bf16", "legacy", (0, 1, 2, 3))
