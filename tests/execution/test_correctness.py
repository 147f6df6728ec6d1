"""Output comparison: tolerances per dtype, NaN, exact type/shape/dtype/layout checks."""
from __future__ import annotations

import torch

from workbench.execution import correctness
from workbench.execution.worker import perturbed_sizes


def test_fp32_is_strict_and_names_lowered_precision():
    torch.manual_seed(0)
    ref = torch.randn(256, 256)
    assert correctness.compare_outputs(ref + 1e-6, ref)[0]
    bf = ref.to(torch.bfloat16).float()
    ok, why = correctness.compare_outputs(bf, ref)
    assert not ok and "precision was lowered" in why


def test_matmul_like_fp32_accepts_tf32_error_but_not_bf16():
    torch.manual_seed(0)
    a, b = torch.randn(128, 512), torch.randn(512, 96)
    ref = a @ b
    # TF32 keeps 10 mantissa bits: emulate by rounding the operands' mantissas.
    def tf32(t):
        return (t.view(torch.int32) & ~0x1FFF).view(torch.float32)
    approx = tf32(a) @ tf32(b)
    assert not correctness.compare_outputs(approx, ref)[0]
    assert correctness.compare_outputs(approx, ref, matmul_like=True)[0]
    bf = (a.bfloat16() @ b.bfloat16()).float()
    assert not correctness.compare_outputs(bf, ref, matmul_like=True)[0]


def test_half_precision_tolerances():
    ref = torch.randn(1000).bfloat16()
    assert correctness.compare_outputs(ref * (1 + 2 ** -8), ref)[0]
    assert not correctness.compare_outputs(ref * 1.1, ref)[0]


def test_nan_rejected_unless_reference_has_it_too():
    ref = torch.randn(10)
    bad = ref.clone()
    bad[3] = float("nan")
    ok, why = correctness.compare_outputs(bad, ref)
    assert not ok and "NaN" in why
    ref2 = ref.clone()
    ref2[3] = float("nan")
    assert correctness.compare_outputs(bad, ref2)[0]
    inf = ref.clone()
    inf[0] = float("inf")
    assert not correctness.compare_outputs(inf, ref)[0]


def test_structure_checks():
    ref = torch.randn(4, 6)
    cases = [
        (ref.double(), "dtype"),
        (ref[:, :5], "shape"),
        (ref.t().contiguous().t(), "contiguous"),
        (ref.numpy(), "expected a tensor"),
        ((ref, ref), "output(s)"),
    ]
    for out, needle in cases:
        ok, why = correctness.compare_outputs(out, ref)
        assert not ok and needle in why, (needle, why)
    assert correctness.compare_outputs((ref.clone(), 3), (ref, 3))[0]
    assert not correctness.compare_outputs((ref.clone(), 4), (ref, 3))[0]


def test_long_reductions_get_a_wider_absolute_tolerance():
    ref = torch.zeros(8)
    out = torch.full((8,), 4e-4)
    assert not correctness.compare_outputs(out, ref, reduced_k=1)[0]
    assert correctness.compare_outputs(out, ref, reduced_k=8192 * 64)[0]


def test_same_tensors_detects_any_change():
    x = torch.randn(5)
    assert correctness.same_tensors([x], [x.clone()])
    y = x.clone()
    y[2] += 1e-7
    assert not correctness.same_tensors([x], [y])
    n = torch.tensor([float("nan"), 1.0])
    assert correctness.same_tensors([n], [n.clone()])


def test_matmul_like_from_metadata():
    assert correctness.is_matmul_like("matmul-epilogue", ())
    assert correctness.is_matmul_like("norm", ("conv", "fused"))
    assert not correctness.is_matmul_like("softmax", ("reduction",))


def test_perturbed_sizes_keeps_structural_sizes():
    got = perturbed_sizes({"M": 48, "N": 200, "DHEAD": 16, "BATCH": 2, "EPS": 1e-5})
    assert set(got) == {"M", "N"}
    assert got["M"] > 48 and got["N"] > 200


def test_tolerance_ratio_says_how_far_outside_the_tolerance_an_output_lies():
    import pytest

    from workbench.execution.correctness import compare_outputs, tolerance_ratio

    ref = torch.zeros(4, 8)
    assert tolerance_ratio(ref + 5e-5, ref) == pytest.approx(0.5)          # atol 1e-4 at a zero reference
    assert tolerance_ratio(ref + 3e-4, ref) == pytest.approx(3.0)
    assert compare_outputs(ref + 3e-4, ref)[0] is False and compare_outputs(ref + 5e-5, ref)[0] is True
    assert tolerance_ratio(ref + 3e-4, ref, reduced_k=1024) == pytest.approx(3.0 / 4)   # atol x sqrt(k) / 8
    assert tolerance_ratio(torch.zeros(4, 9), ref) == float("inf")
    assert tolerance_ratio(torch.full((4, 8), float("nan")), ref) == float("inf")
