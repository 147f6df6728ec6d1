"""Counts derived from the reference on the meta device, checked against hand-computed values,
and the forecasters' treatment of problems whose counts are unknown."""
from __future__ import annotations


import numpy as np
import pytest

from workbench.problems import load_source
from workbench.problems.counts import derive_counts
from workbench.problems.loader import load_file
from workbench.records import Candidate, Hardware, Problem

H100 = Hardware(key="h100", name="H100", compute_capability="9.0", sm_count=132)

MATMUL = """
import torch
import torch.nn as nn
m, k, n = 512, 256, 384
class Model(nn.Module):
    def forward(self, a, b):
        return a @ b
def get_inputs():
    return [torch.randn(m, k), torch.randn(k, n)]
def get_init_inputs():
    return []
"""
CONV = """
import torch
import torch.nn as nn
batch, cin, cout, h, w = 8, 16, 32, 64, 64
class Model(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
    def forward(self, x):
        return self.conv(x)
def get_inputs():
    return [torch.randn(batch, cin, h, w)]
def get_init_inputs():
    return [cin, cout]
"""
LAYER_NORM = """
import torch
import torch.nn as nn
rows, dim = 1024, 768
class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.ln = nn.LayerNorm(dim)
    def forward(self, x):
        return self.ln(x)
def get_inputs():
    return [torch.randn(rows, dim)]
def get_init_inputs():
    return [dim]
"""
ATTENTION = """
import torch
import torch.nn as nn
import torch.nn.functional as F
b, heads, seq, d = 2, 8, 256, 64
class Model(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v)
def get_inputs():
    return [torch.randn(b, heads, seq, d) for _ in range(3)]
def get_init_inputs():
    return []
"""
# A reference the meta device cannot run (data-dependent shape): its counts stay unknown.
UNTRACEABLE = """
import torch
import torch.nn as nn
size = 4096
class Model(nn.Module):
    def forward(self, x):
        y = x
""" + "".join(f"        y = torch.tanh(torch.relu(y) * {1 + i / 100} + 0.1)\n" for i in range(12)) + """\
        return y[torch.nonzero(y > 0, as_tuple=True)].sum() + y
def get_inputs():
    return [torch.randn(size)]
def get_init_inputs():
    return []
"""


def _close(got: float, want: float) -> bool:
    return abs(got - want) <= 0.05 * want


@pytest.mark.parametrize("source, flops, min_bytes", [
    (MATMUL, 2 * 512 * 256 * 384, 4 * (512 * 256 + 256 * 384 + 512 * 384)),
    # 2 * outputs * (cin * 3 * 3); traffic: input, weight, output once
    (CONV, 2 * (8 * 32 * 64 * 64) * (16 * 9), 4 * (8 * 16 * 64 * 64 + 32 * 16 * 9 + 8 * 32 * 64 * 64)),
    # 8 FLOPs per element (mean, variance, normalise, affine); x and y plus weight and bias
    (LAYER_NORM, 8 * 1024 * 768, 4 * (2 * 1024 * 768 + 2 * 768)),
    # QK^T and PV: 2 * 2 * b*h*s*s*d, plus the softmax's s*s per head (lower order); q, k, v, out
    (ATTENTION, 4 * 2 * 8 * 256 * 256 * 64, 4 * 4 * 2 * 8 * 256 * 64),
], ids=["matmul", "conv", "layer_norm", "attention"])
def test_derived_counts_match_hand_counts(source, flops, min_bytes):
    c = derive_counts(load_source(source, "t"))
    assert c.source == "derived", c.error
    assert _close(c.flops, flops), (c.flops, flops)
    assert _close(c.min_bytes, min_bytes), (c.min_bytes, min_bytes)
    assert c.op_bytes >= c.min_bytes * 0.99  # an unfused reference moves at least the bound


def test_load_file_records_where_counts_came_from(tmp_path):
    (tmp_path / "mm.py").write_text(MATMUL)
    (tmp_path / "bad.py").write_text(UNTRACEABLE)
    declared = MATMUL + "\ndef flops():\n    return 7.0\ndef bytes_moved():\n    return 11.0\n"
    (tmp_path / "decl.py").write_text(declared)
    mm, bad, decl = (load_file(tmp_path / f) for f in ("mm.py", "bad.py", "decl.py"))
    assert (mm.count_source, mm.flops) == ("derived", 2 * 512 * 256 * 384)
    assert (bad.count_source, bad.flops, bad.bytes_moved) == ("unknown", 0.0, 0.0)
    assert (decl.count_source, decl.flops, decl.bytes_moved) == ("declared", 7.0, 11.0)
    # A record from before the field: read from its counts.
    assert Problem(id="x", level=1, name="x", source="", flops=1.0).count_source == "declared"
    assert Problem(id="x", level=1, name="x", source="").count_source == "unknown"


def _identity(problem: Problem) -> Candidate:
    return Candidate.from_source(problem.id, problem.source.replace("class Model(", "class ModelNew("))


def _unknown_and_declared(tmp_path) -> tuple[Problem, Problem]:
    (tmp_path / "bad.py").write_text(UNTRACEABLE)
    unknown = load_file(tmp_path / "bad.py")
    assert unknown.count_source == "unknown"
    return unknown, unknown.replace(flops=4096.0 * 60, bytes_moved=2 * 4096 * 4.0,
                                    counts_source="declared")


def test_roofline_never_confident_in_an_extreme_bin_without_counts(tmp_path):
    from workbench.forecast.roofline import RooflineForecaster

    unknown, _ = _unknown_and_declared(tmp_path)
    cand = _identity(unknown)
    f = RooflineForecaster(sigma=0.3).forecast(unknown, cand, H100)
    # Unguarded, the launch-count ratio alone would put it in bin 8 with confidence.
    assert RooflineForecaster(sigma=0.3).forecast(unknown.replace(counts_source="declared"), cand,
                                                  H100).probabilities[-1] > 0.5
    assert max(f.probabilities[0], f.probabilities[-1]) <= 0.5 + 1e-9
    assert abs(sum(f.probabilities) - 1.0) < 1e-9
    assert "Counts unknown" in f.reasoning


def test_learned_never_confident_in_an_extreme_bin_without_counts(tmp_path):
    from workbench.forecast.features import FEATURE_NAMES
    from workbench.forecast.learned import LearnedForecaster

    # Trained where every kernel was ~11x faster: it puts anything in bin 8 with confidence.
    rng = np.random.default_rng(0)
    n = 400
    X = rng.normal(size=(n, len(FEATURE_NAMES)))
    speedups = 2.0 ** rng.normal(3.5, 0.1, n)
    fc = LearnedForecaster(min_samples_leaf=5, calibration_folds=4, reference_time="estimate",
                           ideal_offset=0.0).fit_matrix(X, speedups, np.repeat(np.arange(20), n // 20).astype(str))
    unknown, declared = _unknown_and_declared(tmp_path)
    control = fc.forecast(declared, _identity(declared), H100)
    assert control.probabilities[-1] > 0.5  # the guard below is what keeps this one down
    f = fc.forecast(unknown, _identity(unknown), H100)
    assert max(f.probabilities[0], f.probabilities[-1]) <= 0.5 + 1e-9
    assert f.probabilities[-1] == max(f.probabilities)  # tempered, not reversed
    assert "unknown" in f.reasoning


def test_features_mark_derived_and_unknown_counts(tmp_path):
    from workbench.forecast.features import features

    (tmp_path / "mm.py").write_text(MATMUL)
    derived = load_file(tmp_path / "mm.py")
    unknown, declared = _unknown_and_declared(tmp_path)
    fd = features(derived, _identity(derived), H100)
    fu = features(unknown, _identity(unknown), H100)
    fk = features(declared, _identity(declared), H100)
    assert (fd["counts_known"], fd["counts_derived"]) == (1.0, 1.0)
    assert (fu["counts_known"], fu["counts_derived"]) == (0.0, 0.0)
    assert (fk["counts_known"], fk["counts_derived"]) == (1.0, 0.0)
    assert fu["log2_ideal_speedup"] == 0.0  # no floor: no ideal speedup claimed
