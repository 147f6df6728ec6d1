"""Hardware fingerprints: what a measurement was taken on.

`python -m workbench.execution.hardware [DEVICE_INDEX]` prints the Hardware record as JSON;
the executors call it once in a subprocess so the parent process never initialises CUDA.
"""
from __future__ import annotations

import json
import platform
import re
import subprocess
import sys

from workbench.records import Hardware

# Peak rates used by the roofline guard and forecasters: dense bf16 tensor-core FLOP/s and
# DRAM bandwidth in bytes/s (datasheet numbers for the SXM parts).
PEAKS: dict[str, dict[str, float]] = {
    "h100": {"bf16_flops": 989e12, "fp32_flops": 67e12, "tf32_flops": 495e12, "dram_bytes_s": 3.35e12},
    "h200": {"bf16_flops": 989e12, "fp32_flops": 67e12, "tf32_flops": 495e12, "dram_bytes_s": 4.8e12},
    "a100": {"bf16_flops": 312e12, "fp32_flops": 19.5e12, "tf32_flops": 156e12, "dram_bytes_s": 2.0e12},
    "l40s": {"bf16_flops": 362e12, "fp32_flops": 91.6e12, "tf32_flops": 183e12, "dram_bytes_s": 0.864e12},
}


def gpu_key(name: str) -> str:
    """Short GPU type from a device name: "NVIDIA H100 80GB HBM3" -> "h100"."""
    n = name.lower()
    for k in ("h200", "h100", "a100", "l40s", "l4", "a10g", "v100", "t4", "b200", "gb200"):
        if k in n:
            return k
    return re.sub(r"[^a-z0-9]+", "-", n).strip("-") or "gpu"


_SMI_FIELDS = ("driver_version", "clocks.sm", "clocks.mem", "clocks.max.sm", "clocks.max.mem")


def _nvidia_smi(index: int, fields: tuple[str, ...] = _SMI_FIELDS) -> dict[str, str]:
    try:
        out = subprocess.run(["nvidia-smi", f"--id={index}", f"--query-gpu={','.join(fields)}",
                              "--format=csv,noheader,nounits"], capture_output=True, text=True,
                             timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return {}
    parts = [p.strip() for p in out.split(",")]
    return dict(zip(fields, parts)) if len(parts) == len(fields) else {}


def smi_gpu_key(index: int = 0) -> str | None:
    """gpu_key of CUDA device `index` as nvidia-smi names it, without initialising CUDA in this
    process; None when nvidia-smi does not answer."""
    name = _nvidia_smi(index, ("name",)).get("name")
    return gpu_key(name) if name else None


def _int(x: str | None) -> int:
    try:
        return int(float(x or 0))
    except ValueError:
        return 0


def detect_hardware(index: int = 0) -> Hardware:
    """Fingerprint CUDA device `index` (initialises CUDA in this process)."""
    import torch
    import triton

    p = torch.cuda.get_device_properties(index)
    smi = _nvidia_smi(index)
    return Hardware(
        key=gpu_key(p.name), name=p.name, kind="cuda",
        compute_capability=f"{p.major}.{p.minor}", sm_count=p.multi_processor_count,
        memory_mib=int(p.total_memory // 2**20),
        l2_cache_mib=round(getattr(p, "L2_cache_size", 0) / 2**20, 1),
        sm_clock_mhz=_int(smi.get("clocks.max.sm")), mem_clock_mhz=_int(smi.get("clocks.max.mem")),
        mem_bus_width_bits=int(getattr(p, "memory_bus_width", 0) or 0),
        max_threads_per_sm=int(getattr(p, "max_threads_per_multi_processor", 0) or 0),
        driver=smi.get("driver_version", ""), cuda_version=str(torch.version.cuda or ""),
        torch_version=torch.__version__, triton_version=triton.__version__,
    )


def cpu_hardware() -> Hardware:
    """The CPU 'hardware' of interpreter runs. Its timings are never mixed with GPU data."""
    import torch
    try:
        import triton
        tv = triton.__version__
    except ImportError:  # pragma: no cover
        tv = ""
    return Hardware(key="cpu", name=platform.processor() or platform.machine(), kind="cpu",
                    torch_version=torch.__version__, triton_version=tv)


def roofline_floor_ms(hardware_key: str, flops: float, bytes_moved: float) -> float | None:
    """The fastest any kernel could do `flops` and move `bytes_moved` on this GPU, in ms."""
    peaks = PEAKS.get(hardware_key)
    if not peaks or (flops <= 0 and bytes_moved <= 0):
        return None
    return 1e3 * max(flops / peaks["bf16_flops"], bytes_moved / peaks["dram_bytes_s"])


if __name__ == "__main__":
    idx = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    hw = detect_hardware(idx)
    print(json.dumps(hw.to_dict()))
