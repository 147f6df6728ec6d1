"""The reference trace on the meta device and the relative features built from it."""
from __future__ import annotations

from pathlib import Path

import pytest

from workbench.forecast import reference_profile as rp
from workbench.forecast.features import features, peaks_for
from workbench.problems import loader
from workbench.records import Candidate, Hardware, Problem
from workbench.zoo import zoo_candidates

LIB = Path(loader.__file__).parent / "library"
H100, H200 = Hardware(key="h100", name="H100"), Hardware(key="h200", name="H200")


def _load(rel: str) -> Problem:
    return loader.load_file(LIB / rel)


def test_matmul_reference_is_one_cublas_call_with_exact_flops():
    p = _load("level1/14_matmul_square_fp32.py")
    prof = rp.profile(p)
    assert prof.traced and prof.launches == 1 and prof.counts["matmul"] == 1
    # The analytic count of the problem file and the traced count agree.
    assert prof.total_flops == pytest.approx(p.flops, rel=1e-6)
    assert prof.total_bytes == pytest.approx(p.bytes_moved, rel=1e-6)
    t = rp.reference_time(prof, peaks_for(H100), launch_ms=0.004)
    assert t.library_share > 0.99  # all of it is the cuBLAS kernel
    # fp32 without TF32: 2 n^3 / 67 TFLOP/s at 75% efficiency.
    assert t.ms == pytest.approx(1e3 * p.flops / 67e12 / 0.75 + 0.004, rel=1e-3)


def test_python_loop_reference_counts_every_launch():
    prof = rp.profile(_load("level3/06_selective_scan.py"))
    assert prof.traced and prof.launches > 1000  # 256 time steps x several kernels each
    assert prof.counts["reduce"] == 256
    t = rp.reference_time(prof, peaks_for(H100), launch_ms=0.004)
    assert t.launch_share > 0.5  # launch-bound


def test_elementwise_chain_and_library_share():
    prof = rp.profile(_load("level2/14_scale_tanh_rowsum.py"))
    assert prof.counts["elementwise"] == 3 and prof.counts["reduce"] == 1
    assert rp.reference_time(prof, peaks_for(H100), 0.004).library_share == 0.0
    # bf16 matmul runs on tensor cores: far less time than the fp32 one of the same shape.
    bf16 = rp.reference_time(rp.profile(_load("level1/15_matmul_square_bf16.py")), peaks_for(H100), 0)
    fp32 = rp.reference_time(rp.profile(_load("level1/14_matmul_square_fp32.py")), peaks_for(H100), 0)
    assert bf16.ms < fp32.ms / 5


def test_untraceable_reference_keeps_partial_ops_and_never_raises():
    prof = rp.profile(_load("level3/10_moe_top1_bf16.py"))  # data-dependent nonzero()
    assert not prof.traced and "nonzero" in prof.error
    assert prof.launches >= 1  # router matmul, softmax, max happened before the failure
    broken = Problem(id="L0/broken", level=0, name="broken", source="import nosuchmodule\n")
    assert not rp.profile(broken).traced
    empty = Problem(id="L0/e", level=0, name="e", source="")
    assert rp.profile(empty).error == "no reference source"


def test_relative_features_of_zoo_candidates():
    p = _load("level2/01_linear_bias_relu.py")
    cands = {c.origin: c for c in zoo_candidates(p.id)}
    big = features(p, cands["zoo:tile128x128_k32_w8_s3"], H100)
    slow = features(p, cands["zoo:slow_tile16x16_k16_w1"], H100)
    assert big["ref_traced"] == 1 and big["ref_n_matmul"] == 1 and big["ref_n_elementwise"] == 1
    assert big["ref_lacks_tensor_cores"] == 1  # fp32 reference matmul: no TF32
    assert big["cand_library_calls"] == 0 and big["log2_launch_ratio"] == pytest.approx(1.0)
    # Same problem and launches: the ideal-time ratio depends only on tensor-core use.
    assert big["cand_tensor_cores"] == slow["cand_tensor_cores"]
    assert big["log2_ideal_speedup"] == pytest.approx(slow["log2_ideal_speedup"])
    assert big["log2_elems_per_tile"] < slow["log2_elems_per_tile"]  # bigger tiles, fewer programs
    lib = Candidate.from_source(p.id, "import torch\nclass ModelNew(torch.nn.Module):\n"
                                "    def forward(self, x):\n"
                                "        return torch.relu(x @ self.w.t() + self.b)\n")
    f = features(p, lib, H100)
    assert f["cand_library_calls"] == 1
    # Both are bounded by the cuBLAS time: a full-fp32 Triton matmul matches it at best.
    assert big["cand_tensor_cores"] == 0  # the zoo kernel keeps IEEE fp32 for correctness
    assert f["log2_ideal_speedup"] == pytest.approx(big["log2_ideal_speedup"])
    # A TF32 tl.dot candidate could beat the fp32 (no TF32) reference matmul.
    tf32 = Candidate.from_source(p.id, "import triton\nimport triton.language as tl\n"
                                 "@triton.jit\ndef k(a, b):\n    acc = tl.dot(a, b)\n"
                                 "class ModelNew:\n    def forward(self, x):\n"
                                 "        k[(1,)](x, x)\n")
    g = features(p, tf32, H100)
    assert g["cand_tensor_cores"] == 1 and g["log2_ideal_speedup"] > f["log2_ideal_speedup"] + 1


def test_times_are_relative_to_each_gpu():
    p = _load("level1/02_relu.py")  # memory-bound: H200's bandwidth makes both sides faster
    c = zoo_candidates(p.id)[0]
    a, b = features(p, c, H100), features(p, c, H200)
    assert b["ref_log10_us"] < a["ref_log10_us"]
    assert b["log2_ideal_speedup"] == pytest.approx(a["log2_ideal_speedup"], abs=0.05)


def test_bf16_dot_is_tensor_core_work_even_with_an_ieee_path():
    # The zoo's matmul template picks IEEE=<dtype is fp32> at launch: on a bf16 problem its
    # tl.dot runs on tensor cores although the source also names input_precision="ieee".
    p16 = _load("level1/15_matmul_square_bf16.py")
    p32 = _load("level1/14_matmul_square_fp32.py")
    c16 = [c for c in zoo_candidates(p16.id) if "ieee" in c.source and "tl.dot" in c.source]
    c32 = [c for c in zoo_candidates(p32.id) if "ieee" in c.source and "tl.dot" in c.source]
    assert c16 and c32
    assert features(p16, c16[0], H100)["cand_tensor_cores"] == 1
    assert features(p32, c32[0], H100)["cand_tensor_cores"] == 0
