"""Render a Hardware record as the small table shown to forecasting models."""
from __future__ import annotations

from workbench.records import Hardware


def hardware_rows(hw: Hardware) -> list[tuple[str, str]]:
    """(property, value) rows with units; fields the record does not know are left out."""
    rows: list[tuple[str, str]] = [("GPU", hw.name or hw.key)]
    if not hw.is_gpu:
        rows.append(("Kind", f"{hw.kind} (no GPU: interpreter timings)"))
    if hw.compute_capability:
        rows.append(("Compute capability", hw.compute_capability))
    if hw.memory_mib:
        rows.append(("Memory", f"{hw.memory_mib / 1024:.0f} GiB"))
    if hw.sm_count:
        rows.append(("Streaming multiprocessors (SMs)", str(hw.sm_count)))
    if hw.max_threads_per_sm:
        rows.append(("Max threads per SM", str(hw.max_threads_per_sm)))
    if hw.sm_clock_mhz:
        rows.append(("SM clock (max)", f"{hw.sm_clock_mhz} MHz"))
    if hw.mem_clock_mhz:
        rows.append(("Memory clock (max)", f"{hw.mem_clock_mhz} MHz"))
    if hw.mem_bus_width_bits:
        rows.append(("Memory bus width", f"{hw.mem_bus_width_bits} bits"))
    if hw.l2_cache_mib:
        rows.append(("L2 cache", f"{hw.l2_cache_mib:g} MiB"))
    return rows


def render_hardware_table(hw: Hardware) -> str:
    """A Markdown table of the GPU's properties (one row per known field)."""
    rows = hardware_rows(hw)
    width = max(len(k) for k, _ in rows)
    lines = [f"| {'Property'.ljust(width)} | Value |", f"|{'-' * (width + 2)}|-------|"]
    lines += [f"| {k.ljust(width)} | {v} |" for k, v in rows]
    return "\n".join(lines)
