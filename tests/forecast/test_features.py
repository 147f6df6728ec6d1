"""Static features read from real zoo candidates and edge-case sources."""
from __future__ import annotations

from pathlib import Path

import pytest

from workbench.forecast.features import FEATURE_NAMES, feature_matrix, features, peaks_for
from workbench.problems import loader
from workbench.records import Candidate, Hardware, Problem
from workbench.zoo import zoo_candidates

H100 = Hardware(key="h100", name="NVIDIA H100")
LIB = Path(loader.__file__).parent / "library"


@pytest.fixture(scope="module")
def matmul():
    p = loader.load_file(LIB / "level2" / "01_linear_bias_relu.py")
    return p, {c.origin: c for c in zoo_candidates(p.id)}


def test_tuning_knobs_come_from_modelnew_call(matmul):
    p, cands = matmul
    slow = features(p, cands["zoo:slow_tile16x16_k16_w1"], H100)
    big = features(p, cands["zoo:tile128x128_k32_w8_s3"], H100)
    assert (slow["num_warps"], slow["num_stages"], slow["log2_block_max"]) == (1, 1, 4)
    assert (big["num_warps"], big["num_stages"], big["log2_block_max"]) == (8, 3, 7)
    assert big["log2_block_prod"] == 7 + 7 + 5
    assert big["n_dot"] >= 1 and big["n_loops"] >= 1 and big["grid_dims"] == 2
    # Reference relu(fc(x)) is 2 ops; the candidate fuses them into 1 launch.
    assert big["ref_ops"] == 2 and big["n_launches"] == 1 and big["fusion_ratio"] == 2
    assert big["compute_bound"] == 1 and big["torch_ops_left"] == 0


def test_softmax_candidate(matmul):
    p = loader.load_file(LIB / "level1" / "01_softmax.py")
    c = {c.origin: c for c in zoo_candidates(p.id)}["zoo:online_loop_b1024_w4"]
    f = features(p, c, H100)
    assert f["n_reduce"] >= 1 and f["log2_block_max"] == 10 and f["num_warps"] == 4
    assert f["compute_bound"] == 0 and f["backend_triton"] == 1


def test_torch_ops_left_and_unparsable_source():
    p = Problem(id="L1/x", level=1, name="x", dtype="bf16", flops=1e6, bytes_moved=1e6,
                source="class Model:\n    def forward(self, x):\n        return torch.relu(x)\n")
    lazy = Candidate.from_source("L1/x", "class ModelNew:\n    def forward(self, x):\n"
                                 "        y = torch.empty_like(x)\n        return torch.relu(x) + torch.exp(y)\n")
    f = features(p, lazy, H100)
    assert f["torch_ops_left"] == 2 and f["n_kernels"] == 0 and f["dtype_bf16"] == 1
    broken = Candidate.from_source("L1/x", "def (:\n tl.load(")
    g = features(p, broken, H100)
    assert g["parse_ok"] == 0 and g["n_load"] == 1


def test_matrix_order_and_shape(matmul):
    p, cands = matmul
    rows = [(p, c, H100) for c in cands.values()]
    X = feature_matrix(rows)
    assert X.shape == (len(rows), len(FEATURE_NAMES))
    j = FEATURE_NAMES.index("num_warps")
    assert sorted(X[:, j]) == sorted(features(p, c, H100)["num_warps"] for c in cands.values())
    assert not any(n.startswith("problem") for n in FEATURE_NAMES)  # no problem identity


def test_peaks_table_and_fallbacks():
    assert peaks_for(H100).source == "table"
    assert peaks_for(Hardware(key="h200", name="x")).dram_bytes_s > peaks_for(H100).dram_bytes_s
    b = peaks_for(Hardware(key="b200", name="x", sm_count=148, compute_capability="10.0"))
    assert b.source == "scaled from h100 by SM count"
    assert b.fp32_flops == pytest.approx(peaks_for(H100).fp32_flops * 148 / 132)
    a = peaks_for(Hardware(key="a30", name="x", sm_count=56, compute_capability="8.0"))
    assert a.source.startswith("scaled from a100")
    assert peaks_for(Hardware(key="mystery", name="x")).source == "assumed h100"


def test_a_zero_valued_block_keyword_is_not_a_tile(matmul):
    """A keyword spelled like a block size but set to 0 (a flag) must not break the features: the
    tile sizes are the positive ones."""
    p, cands = matmul
    c = cands["zoo:tile128x128_k32_w8_s3"]
    flagged = Candidate(id="flag0", problem_id=p.id, backend=c.backend, origin="test",
                        source=c.source.replace("stages=3)", "stages=3, block_split=0)"))
    assert "block_split=0" in flagged.source
    f = features(p, flagged, H100)
    assert f["log2_block_max"] == 7 and f["log2_block_prod"] == 7 + 7 + 5


def test_parsed_sources_are_shared_and_never_changed_by_a_caller():
    """A source is parsed once for all its analyses (features._tree, _index); what callers get
    is theirs to change."""
    from workbench.forecast import features as F

    src = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x @ x)\n"
    calls, ok = F._forward_calls(src, "ModelNew")
    assert ok and calls == ["torch.relu"]
    calls.append("changed")
    assert F._forward_calls(src, "ModelNew") == (["torch.relu"], True)
    assert F._library_calls(src) == 1                     # the @ operator in forward
    assert F._forward_calls("def (", "ModelNew") == ([], False)
    assert F._index("def (") is None and F._tree(src) is F._tree(src)


def test_the_counts_provenance_is_part_of_the_memory_key(matmul):
    """The memory cache's key holds where the counts came from: the same source and counts
    marked derived give counts_derived 1, not the declared triple's cached 0."""
    p, cands = matmul
    c = cands["zoo:tile128x128_k32_w8_s3"]
    declared = features(p.replace(counts_source="declared"), c, H100)
    derived = features(p.replace(counts_source="derived"), c, H100)
    assert declared["counts_derived"] == 0 and derived["counts_derived"] == 1
