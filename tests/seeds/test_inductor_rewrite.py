"""Inductor seeds: output code Inductor generated on an H200 (fixtures, captured with
`workbench.seeds.inductor.capture`) rewritten into self-contained answers that run on the CPU
(Triton interpreter) at sizes other than the ones compiled for, pass the static guard and match
the reference."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("TRITON_INTERPRET", "1")

from workbench.execution.guards import static_findings  # noqa: E402
from workbench.problems import load_file, load_source  # noqa: E402
from workbench.seeds import seed_kind, seeds_for  # noqa: E402
from workbench.seeds.inductor import RewriteError, _check_generic, rewrite  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures" / "inductor"
CORPUS = Path(__file__).parents[1] / "problems" / "corpus"
SMALL = {"L1_19_ReLU": {"batch_size": 8, "dim": 100}, "L1_6_Softmax": {"batch_size": 6, "dim": 70},
         "L1_11_SumReduce": {"batch_size": 5, "dim": 90}, "L1_16_Cumsum": {"batch_size": 5, "dim": 40},
         "L2_1_Linear_ReLU": {"batch_size": 6, "in_features": 24, "out_features": 20},
         "L2_11_Bias_Add_ReLU_Residual": {"batch_size": 4, "channels": 6, "length": 33}}


def _fixture(name: str):
    fx = json.loads((FIXTURES / f"{name}.json").read_text())
    problem = load_file(CORPUS / fx["corpus_file"], with_counts=False)
    return problem, fx


def _run(problem, source: str, sizes: dict):
    import torch

    from workbench.execution.worker import _import_candidate, copy_state

    lp = load_source(problem.source, name=problem.id, sizes=sizes)
    torch.manual_seed(0)
    ref = lp.Model(*lp.get_init_inputs()).eval()
    with tempfile.TemporaryDirectory() as tmp:
        mod = _import_candidate(source, Path(tmp), "inductor_fixture")
        torch.manual_seed(0)
        new = mod.ModelNew(*lp.get_init_inputs())
        copy_state(ref, new)
        inputs = lp.get_inputs()
        with torch.no_grad():
            return ref(*inputs), new.eval()(*inputs)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_a_rewritten_inductor_module_runs_at_other_sizes_and_matches(name):
    import torch

    problem, fx = _fixture(name)
    src = rewrite(problem, fx["code"], fx["arg_exprs"], fx["outputs"], fx["configs"])
    assert not static_findings(src, problem.source)
    assert "@triton.jit" in src and "triton_heuristics" not in src and "async_compile" not in src
    assert "class ModelNew(_Reference)" in src
    # The autotuner's pick is a literal at the launch, where the mutation operators can change it.
    kernel = next(iter(fx["configs"]))
    for key, value in fx["configs"][kernel]["kwargs"].items():
        assert f"{key}={value}" in src or "persistent" in src
    want, got = _run(problem, src, SMALL[name])
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


def test_library_calls_become_torch_calls_and_runtime_helpers_go():
    problem, fx = _fixture("L2_1_Linear_ReLU")
    src = rewrite(problem, fx["code"], fx["arg_exprs"], fx["outputs"], fx["configs"])
    body = src[src.index("def call(args):"):]
    assert "extern_kernels" not in body and ("torch.mm(" in body or "torch.addmm(" in body)
    for helper in ("empty_strided_cuda", "reinterpret_tensor", "get_raw_stream", "assert_size_stride", "DeviceGuard"):
        assert helper not in body
    assert "torch.empty_strided(" in body


def test_refusals_name_the_reason():
    problem, fx = _fixture("L1_19_ReLU")
    with pytest.raises(RewriteError, match=r"call\(\) takes \d+ arguments, \d+ were described"):
        rewrite(problem, fx["code"], fx["arg_exprs"] + ["x"], fx["outputs"], fx["configs"])
    only_library = fx["code"].split("triton_poi")[0] + "\ndef call(args):\n    arg0_1, = args\n    return (arg0_1,)\n"
    with pytest.raises(RewriteError, match="no Triton kernel"):
        rewrite(problem, only_library, ["x"], 0, {})
    template = fx["code"].replace("@triton_heuristics.pointwise(", "@triton_heuristics.template(")
    with pytest.raises(RewriteError, match="template"):
        rewrite(problem, template, fx["arg_exprs"], fx["outputs"], fx["configs"])


def test_a_size_inductor_fixed_that_differs_at_the_cpu_sizes_refuses_the_seed():
    # nn.LayerNorm's normalized_shape is a constant of the graph: Inductor fixes the feature size.
    problem = load_file(CORPUS / "level1" / "10_LayerNorm.py", with_counts=False)
    exprs = ["self.norm.weight", "self.norm.bias", "x.size(0)", "x"]
    with pytest.raises(RewriteError, match="not size-generic"):
        _check_generic(problem, exprs, [[2048], [2048], None, [None, 2048]], [])
    _check_generic(problem, exprs, [[None], [None], None, [None, None]], [])


def test_an_inductor_seed_comes_first_and_says_its_kind():
    problem, fx = _fixture("L1_19_ReLU")
    src = rewrite(problem, fx["code"], fx["arg_exprs"], fx["outputs"], fx["configs"])
    seeds = seeds_for(problem, inductor_source=src, family_variants=False)
    assert seeds[0].origin == "seed:inductor" and seed_kind(seeds[0].origin) == "inductor"
    assert [seed_kind(c.origin) for c in seeds[1:]] == ["family", "generic"]


def test_rewritten_seeds_pass_the_executor_without_importing_inductor():
    """The executor's own check (guards included): importing torch._inductor would bring in
    torch._dynamo, which replaces torch functions, and the runtime guard would flag the seed."""
    from workbench.execution.executors import CPUExecutor
    from workbench.records import Candidate

    cands = []
    for name in ("L1_19_ReLU", "L1_6_Softmax"):
        problem, fx = _fixture(name)
        sizes = ", ".join(f"{k!r}: {v}" for k, v in SMALL[name].items())
        problem = problem.replace(source=problem.source + f"\nCPU_SIZES = {{{sizes}}}\n")
        src = rewrite(problem, fx["code"], fx["arg_exprs"], fx["outputs"], fx["configs"])
        assert "torch._inductor" not in src
        cands.append((problem, Candidate.from_source(problem.id, src, origin="seed:inductor")))
    with CPUExecutor(workers=2, options={"seeds": [0], "cpu_timing": {"max_total_ms": 20, "max_runs": 3}}) as ex:
        futures = [ex.submit(p, [c])[0] for p, c in cands]
        results = [f.result() for f in futures]
    assert all(m.ok for m in results), [(m.status, m.reason[:300]) for m in results]


def test_without_a_gpu_the_inductor_seed_is_a_reason_and_the_other_seeds_remain():
    from workbench.search.generators import ZooGenerator
    from workbench.seeds.inductor import seed_on_gpu

    problem, _ = _fixture("L1_19_ReLU")
    row = seed_on_gpu(problem, 0, timeout_s=300)
    assert row["ok"] is False and row["error"]
    gen = ZooGenerator(inductor_gpu=0, family_variants=False)
    gen.inductor[problem.id] = None  # as seeds() records a failed Inductor seed
    kinds = [gen.generation_info(c.id)["seed_kind"] for c in gen.seeds(problem)]
    assert kinds == ["family", "generic"]
