"""Outputs written to files by one process and compared in another.

A worker writes each output it was checked or timed on (`write_outputs`: raw bytes per
tensor, metadata in its result message); the clean reference process writes the reference's
outputs the same way; the executor compares the two (`compare_files`) with the tolerances of
`correctness.compare_outputs`. The candidate never sees the positions compared: a small output
is compared whole, a large one at positions drawn by the executor after the worker wrote it.
"""
from __future__ import annotations

import hashlib
import os
import re
import secrets
from pathlib import Path
from typing import Any

import numpy as np

#: Outputs with at most this many elements are compared whole; larger ones at SAMPLE positions.
FULL_COMPARE_MAX = 1 << 22
SAMPLE = 1 << 20
#: The other seeds' and the fresh inputs' outputs are shipped (and written by the reference)
#: only when an output is at most this large; the first seed's, the second shape's and the
#: timed runs' always.
EXTRA_POINT_MAX_BYTES = 32 * 2**20

_NP = {"float32": np.float32, "float64": np.float64, "float16": np.float16, "bfloat16": np.int16,
       "int64": np.int64, "int32": np.int32, "int16": np.int16, "int8": np.int8, "uint8": np.uint8,
       "bool": np.bool_}


def nbytes(out: Any) -> int:
    """Bytes of the tensors in `out` (a tensor or a tuple/list of tensors and plain values)."""
    from workbench.execution.correctness import _flatten

    return sum(t.numel() * t.element_size() for t in _flatten(out) if hasattr(t, "element_size"))


def ships(point: str, size_bytes: int, first: bool) -> bool:
    """Whether the output at `point` (of `size_bytes`) is written: the same rule on both sides."""
    return first or point.startswith(("second shape", "timed:", "set")) or size_bytes <= EXTRA_POINT_MAX_BYTES


def write_outputs(directory: str | os.PathLike, point: str, out: Any) -> list[dict]:
    """Write each tensor of `out` (a tensor or a tuple/list of them and plain values) to
    DIRECTORY/<point>_<i>.bin; return the metadata list the reader needs."""
    import torch

    from workbench.execution.correctness import _flatten

    metas = []
    for i, t in enumerate(_flatten(out)):
        if not isinstance(t, torch.Tensor):
            value = t if isinstance(t, (int, float, bool, str)) or t is None else repr(t)
            metas.append({"kind": "value", "value": value})
            continue
        dtype = str(t.dtype).replace("torch.", "")
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", point) + f"_{i}.bin"
        flat = t.detach().reshape(-1).contiguous().cpu()
        if dtype in _NP:
            flat.view(torch.uint8).numpy().tofile(os.path.join(directory, name))
        metas.append({"kind": "tensor", "dtype": dtype, "shape": list(t.shape), "numel": int(t.numel()),
                      "contiguous": bool(t.is_contiguous()), "type": type(t).__name__,
                      "file": name if dtype in _NP else None})
    return metas


def sha256_file(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def _load(path: Path, meta: dict, positions: np.ndarray | None):
    import torch

    raw = np.memmap(path, dtype=_NP[meta["dtype"]], mode="r") if meta["numel"] else np.zeros(0, _NP[meta["dtype"]])
    if raw.size != meta["numel"]:
        raise ValueError(f"{path.name}: {raw.size} elements on file, {meta['numel']} announced")
    arr = np.array(raw[positions] if positions is not None else raw)
    t = torch.from_numpy(arr)
    if meta["dtype"] == "bfloat16":
        t = t.view(torch.bfloat16)
    return t


def compare_files(cand_dir: str | os.PathLike, cand: list[dict], ref_dir: str | os.PathLike, ref: list[dict],
                  reduced_k: int = 1, matmul_like: bool = False, contract: Any = None) -> tuple[bool, str]:
    """(ok, reason): the candidate's outputs of one point against the reference's.

    Types, counts, shapes, dtypes and contiguity from the metadata; values with
    `correctness.compare_outputs` over all elements, or over SAMPLE positions drawn here from
    the operating system's random source when the output has more than FULL_COMPARE_MAX; the
    tolerance is the run's `contract` (None: the project's rules)."""
    from workbench.execution import correctness

    if len(cand) != len(ref):
        return False, f"returned {len(cand)} output(s), the reference returns {len(ref)}"
    for i, (c, r) in enumerate(zip(cand, ref)):
        tag = f"output {i}" if len(ref) > 1 else "output"
        if r["kind"] == "value":
            if c.get("kind") != "value" or c.get("value") != r["value"]:
                return False, f"{tag}: {c.get('value')!r} != reference {r['value']!r}"
            continue
        if c.get("kind") != "tensor":
            return False, f"{tag}: expected a tensor, got {c.get('kind')}"
        if c.get("type") != "Tensor":
            return False, f"{tag}: a {c.get('type')}, a tensor subclass (lazy or deferred values)"
        if list(c["shape"]) != list(r["shape"]):
            return False, f"{tag}: shape {tuple(c['shape'])} != reference {tuple(r['shape'])}"
        if c["dtype"] != r["dtype"]:
            return False, f"{tag}: dtype {c['dtype']} != reference {r['dtype']}"
        if r["contiguous"] and not c["contiguous"]:
            return False, f"{tag}: not contiguous while the reference's output is"
        if r["file"] is None or not r["numel"]:
            continue
        if not c.get("file"):
            return False, f"{tag}: the worker wrote no data for it"
        n = r["numel"]
        pos = None
        if n > FULL_COMPARE_MAX:
            rng = np.random.default_rng(secrets.randbits(64))
            pos = np.sort(rng.integers(0, n, SAMPLE))
        try:
            ct = _load(Path(cand_dir) / c["file"], c, pos)
            rt = _load(Path(ref_dir) / r["file"], r, pos)
        except (OSError, ValueError) as e:
            return False, f"{tag}: the worker's output data could not be read ({e})"
        ok, why = correctness.compare_outputs(ct, rt, reduced_k, matmul_like, contract)
        if not ok:
            where = f" (at {SAMPLE} sampled positions)" if pos is not None else ""
            return False, why.replace("output:", f"{tag}:", 1) + where
    return True, ""
