"""Hardware fingerprints and roofline floors."""
from __future__ import annotations

import pytest
import torch

from workbench.execution import hardware


def test_gpu_key():
    assert hardware.gpu_key("NVIDIA H100 80GB HBM3") == "h100"
    assert hardware.gpu_key("NVIDIA H200") == "h200"
    assert hardware.gpu_key("NVIDIA A100-SXM4-80GB") == "a100"
    assert hardware.gpu_key("Some New Card X9") == "some-new-card-x9"


def test_cpu_hardware_is_labelled_cpu():
    hw = hardware.cpu_hardware()
    assert hw.key == "cpu" and hw.kind == "cpu" and not hw.is_gpu
    assert hw.torch_version == torch.__version__
    assert len(hw.fingerprint) == 16


def test_roofline_floor():
    # 1 GB at 3.35 TB/s is about 0.3 ms on an H100; compute-bound work uses the FLOP peak.
    assert hardware.roofline_floor_ms("h100", 0, 1e9) == pytest.approx(1e3 / 3.35e3, rel=1e-6)
    assert hardware.roofline_floor_ms("h100", 989e12, 1) == pytest.approx(1e3)
    assert hardware.roofline_floor_ms("cpu", 1e9, 1e9) is None
    assert hardware.roofline_floor_ms("h100", 0, 0) is None


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_detect_hardware_on_gpu():
    hw = hardware.detect_hardware(0)
    assert hw.kind == "cuda" and hw.sm_count > 0 and hw.memory_mib > 1000
    assert hw.compute_capability.count(".") == 1 and hw.l2_cache_mib > 0
    assert hw.key == hardware.gpu_key(hw.name)
