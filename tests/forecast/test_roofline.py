"""The roofline forecaster orders candidates by their static knobs and stays a distribution."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from workbench import bins
from workbench.forecast.roofline import RooflineForecaster, normal_bin_probabilities
from workbench.problems import loader
from workbench.records import Candidate, Hardware
from workbench.zoo import zoo_candidates

H100 = Hardware(key="h100", name="NVIDIA H100", sm_count=132)
LIB = Path(loader.__file__).parent / "library"


@pytest.fixture(scope="module")
def matmul():
    p = loader.load_file(LIB / "level2" / "01_linear_bias_relu.py")
    return p, {c.origin.split(":")[1]: c for c in zoo_candidates(p.id)}


def _spread(f) -> float:
    """Standard deviation (octaves) of the forecast over the bin midpoints."""
    p, m = np.asarray(f.probabilities), np.asarray(bins.LOG2_MIDPOINTS)
    return float(np.sqrt(p @ (m - p @ m) ** 2))


def test_normal_bins():
    p = normal_bin_probabilities(0.0, 0.3)
    assert sum(p) == pytest.approx(1.0)
    # 1.0x sits on the edge between bins 3 (0.71-1.0) and 4 (1.0-1.41): mass split evenly.
    assert p[3] == pytest.approx(p[4], rel=1e-2) and p[3] + p[4] > 0.9
    assert int(np.argmax(normal_bin_probabilities(3.0, 0.3))) == bins.bin_of(8.0)
    assert min(normal_bin_probabilities(-10, 0.1)) > 0  # no bin is ruled out


def test_slow_variant_forecast_slower(matmul):
    p, c = matmul
    rf = RooflineForecaster()
    slow = rf.forecast(p, c["slow_tile16x16_k16_w1"], H100)
    good = rf.forecast(p, c["tile128x128_k32_w8_s3"], H100)
    assert slow.expected_log2_speedup < good.expected_log2_speedup - 1.0
    assert "compute-bound" in good.reasoning and len(good.reasoning) < 320
    assert good.forecaster == "roofline" and good.hardware_key == "h100"


def test_leftover_torch_ops_cost_time():
    p = loader.load_file(LIB / "level1" / "01_softmax.py")
    fused = next(c for c in zoo_candidates(p.id) if c.origin == "zoo:one_pass_row")
    assert "return y" in fused.source
    lazy = Candidate.from_source(p.id, fused.source.replace("return y", "return torch.exp(torch.log(y))"))
    rf = RooflineForecaster()
    assert (rf.forecast(p, lazy, H100).expected_log2_speedup
            < rf.forecast(p, fused, H100).expected_log2_speedup - 0.5)


def test_unknown_counts_are_less_confident(matmul):
    p, c = matmul
    rf = RooflineForecaster()
    known = rf.forecast(p, c["tile64x64_k32_w4_s2"], H100)
    unknown = rf.forecast(p.replace(flops=0.0, bytes_moved=0.0), c["tile64x64_k32_w4_s2"], H100)
    assert _spread(unknown) > _spread(known) + 0.3
    assert "unknown" in unknown.reasoning


def test_parent_relative(matmul):
    p, c = matmul
    rf = RooflineForecaster()
    same = rf.forecast(p, c["tile64x64_k32_w4_s2"], H100, parent=c["tile64x64_k32_w4_s2"],
                       relative_to="parent")
    assert same.expected_log2_speedup == pytest.approx(0.0, abs=0.05)
    up = rf.forecast(p, c["tile128x128_k32_w8_s3"], H100, parent=c["slow_tile16x16_k16_w1"],
                     relative_to="parent")
    assert up.relative_to == "parent" and up.expected_log2_speedup > 1.0
    assert rf.forecast(p, c["tile64x64_k32_w4_s2"], H100, relative_to="parent").abstained


def test_cpu_hardware_abstains(matmul):
    p, c = matmul
    f = RooflineForecaster().forecast(p, c["tile64x64_k32_w4_s2"], Hardware(key="cpu", name="x", kind="cpu"))
    assert f.abstained and "GPU" in f.reasoning


# --------------------------------------------------------------------------- the forecast cache,
# exercised through the roofline forecaster (no separate test file was assigned for cache.py)
def test_cached_roofline_hits_and_persists(tmp_path, matmul):
    from workbench.forecast.cache import CachedForecaster, ForecastCache, feature_key

    p, c = matmul
    calls = []

    class Counting(RooflineForecaster):
        def forecast_batch(self, items, hardware, relative_to="reference", parents=None):
            calls.append(len(items))
            return super().forecast_batch(items, hardware, relative_to, parents)

    cache = ForecastCache(tmp_path / "cache.sqlite")
    cf = CachedForecaster(Counting(), cache)
    items = [(p, c["tile64x64_k32_w4_s2"]), (p, c["slow_tile16x16_k16_w1"])]
    first = cf.forecast_batch(items, H100)
    again = cf.forecast_batch(items + [(p, c["tile128x128_k32_w8_s3"])], H100)
    assert calls == [2, 1] and again[:2] == first
    assert cache.hits == 2 and len(cache) == 3
    cache.close()
    reopened = ForecastCache(tmp_path / "cache.sqlite")
    key = feature_key(p, items[0][1], H100)
    assert reopened.get("roofline", key) == first[0]
    # The key changes with the GPU, the parent and relative_to.
    assert key != feature_key(p, items[0][1], Hardware(key="h200", name="H200"))
    assert key != feature_key(p, items[0][1], H100, parent=items[1][1], relative_to="parent")
    # Abstentions are not cached: a later try may succeed.
    cpu = Hardware(key="cpu", name="x", kind="cpu")
    cf2 = CachedForecaster(RooflineForecaster(), reopened)
    assert cf2.forecast(p, items[0][1], cpu).abstained
    assert reopened.get("roofline", feature_key(p, items[0][1], cpu)) is None
