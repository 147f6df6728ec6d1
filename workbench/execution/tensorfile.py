"""Tensors written by one process and read by another, without pickle.

The judge's preparation process (reference.py) writes the reference's weights, a plain state
dict, once per problem and shape; the candidate's worker and the clean reference worker read
the same files and copy them into their models by name. A file is the raw bytes of one
contiguous tensor; `state.json` beside them names each tensor's file, dtype and shape.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Mapping

import numpy as np

_NP = {"float32": np.float32, "float64": np.float64, "float16": np.float16, "bfloat16": np.int16,
       "int64": np.int64, "int32": np.int32, "int16": np.int16, "int8": np.int8, "uint8": np.uint8,
       "bool": np.bool_}


def write_state(directory: str | os.PathLike, state: Mapping[str, "object"]) -> dict:
    """Write a state dict (names -> CPU or device tensors) under `directory` (created; readable
    by every user: weights are no secret); returns its index."""
    import torch

    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    os.chmod(d, 0o755)
    index = {}
    for i, (name, t) in enumerate(state.items()):
        if not isinstance(t, torch.Tensor):
            continue
        dtype = str(t.dtype).replace("torch.", "")
        if dtype not in _NP:
            raise TypeError(f"weight {name} has dtype {dtype}, which cannot be written")
        fname = f"{i}_" + re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:80] + ".bin"
        t.detach().reshape(-1).contiguous().cpu().view(torch.uint8).numpy().tofile(d / fname)
        os.chmod(d / fname, 0o644)
        index[name] = {"file": fname, "dtype": dtype, "shape": list(t.shape)}
    (d / "state.json").write_text(json.dumps(index))
    os.chmod(d / "state.json", 0o644)
    return index


def read_state(directory: str | os.PathLike) -> dict:
    """The state dict written by `write_state` (CPU tensors, in the written order)."""
    import torch

    d = Path(directory)
    index = json.loads((d / "state.json").read_text())
    out = {}
    for name, meta in index.items():
        arr = np.fromfile(d / meta["file"], dtype=_NP[meta["dtype"]])
        t = torch.from_numpy(arr)
        if meta["dtype"] == "bfloat16":
            t = t.view(torch.bfloat16)
        out[name] = t.reshape(meta["shape"])
    return out


def sha256_file(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()
