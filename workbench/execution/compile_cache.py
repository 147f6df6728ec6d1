"""Content-addressed build cache under kernels_cache/build/.

Triton keeps its own content-addressed cache (TRITON_CACHE_DIR). CUDA C++ candidates built
with `load_inline` get an extensions directory keyed by the source, the toolchain and the
GPU, so measuring the same source twice reuses the built module, and two workers never build
into the same directory at once unless they build the same thing.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from workbench.records import Candidate, Hardware, normalise_source

DEFAULT_ROOT = Path(__file__).resolve().parents[2] / "kernels_cache" / "build"


def build_key(candidate: Candidate, hardware: Hardware) -> str:
    """16 hex digits of sha256(normalised source, torch, CUDA, compute capability, GPU type).

    The source is normalised like candidate ids (Python comments and blank lines dropped;
    string contents, such as CUDA code, kept verbatim), so a cosmetic edit is a cache hit.
    """
    h = hashlib.sha256()
    for part in (normalise_source(candidate.source), hardware.torch_version, hardware.cuda_version,
                 hardware.compute_capability, hardware.key):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


def cache_env(candidate: Candidate, hardware: Hardware, root: str | Path | None = None) -> dict[str, str]:
    root = Path(root) if root else DEFAULT_ROOT
    env = {"TRITON_CACHE_DIR": str(root / "triton" / hardware.key)}
    if candidate.backend == "cuda":
        env["TORCH_EXTENSIONS_DIR"] = str(root / "ext" / build_key(candidate, hardware))
    return env
