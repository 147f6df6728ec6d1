"""Static features of a (problem, candidate, hardware) triple for the learned and roofline forecasters.

Nothing here runs code: the candidate and reference sources are read with `ast` and regular
expressions, so features exist for sources that do not even compile (`parse_ok` = 0 then).
No feature names the problem, so a model trained on these generalises to unseen problems.

Units: bytes and FLOPs are the problem's analytic counts at full size; `log10_*` features are
log10(1 + x); bandwidth in TB/s, peak rates in TFLOP/s; times in ms.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import math
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from workbench.execution.hardware import PEAKS
from workbench.forecast import feature_store, reference_profile
from workbench.records import Candidate, Hardware, Problem

# SM counts of the parts in PEAKS (SXM / datasheet), used to match unknown GPUs by SM count.
SM_COUNTS: dict[str, int] = {"h100": 132, "h200": 132, "a100": 108, "l40s": 142}
#: Per-launch overhead of a kernel, ms (host launch + scheduling; a typical measured value).
LAUNCH_MS = 0.004


@dataclass(frozen=True)
class Peaks:
    """Peak rates of a GPU: FLOP/s per precision and DRAM bytes/s. `source` says where from."""

    key: str
    sm_count: int
    bf16_flops: float
    fp32_flops: float
    tf32_flops: float
    dram_bytes_s: float
    source: str  # "table", "scaled from <key> by SM count", "assumed h100"

    def flops_for(self, dtype: str, tensor_cores: bool) -> float:
        """Peak FLOP/s for a dtype; fp32 reaches TF32 tensor-core rates only with tensor_cores."""
        if dtype in ("bf16", "fp16"):
            return self.bf16_flops if tensor_cores else self.fp32_flops * 2
        return self.tf32_flops if tensor_cores else self.fp32_flops

    @property
    def ridge(self) -> float:
        """Arithmetic intensity (FLOP/byte) where fp32 compute and bandwidth limits meet."""
        return self.fp32_flops / self.dram_bytes_s


# Compute capability -> the table part of the same (or nearest) generation.
_CC_FAMILY = {"8.0": "a100", "8.6": "l40s", "8.9": "l40s", "9": "h100", "10": "h100", "12": "l40s"}


def peaks_for(hardware: Hardware) -> Peaks:
    """Peaks of `hardware`: the table by key; else a table part of the same generation (by
    compute capability, else the nearest SM count) scaled by the SM-count ratio; else H100's.
    `Peaks.source` says which."""
    key = hardware.key
    if key in PEAKS:
        return Peaks(key=key, sm_count=hardware.sm_count or SM_COUNTS[key], source="table",
                     **PEAKS[key])
    if hardware.sm_count > 0:
        near = _CC_FAMILY.get(hardware.compute_capability.split(".")[0] + "."
                              + (hardware.compute_capability.split(".") + ["0"])[1]) \
            or _CC_FAMILY.get(hardware.compute_capability.split(".")[0]) \
            or min(SM_COUNTS, key=lambda k: abs(SM_COUNTS[k] - hardware.sm_count))
        r = hardware.sm_count / SM_COUNTS[near]
        p = PEAKS[near]
        return Peaks(key=key, sm_count=hardware.sm_count, bf16_flops=p["bf16_flops"] * r,
                     fp32_flops=p["fp32_flops"] * r, tf32_flops=p["tf32_flops"] * r,
                     dram_bytes_s=p["dram_bytes_s"] * r,
                     source=f"scaled from {near} by SM count")
    return Peaks(key=key, sm_count=SM_COUNTS["h100"], source="assumed h100", **PEAKS["h100"])


# --------------------------------------------------------------------------- source analysis
_ALLOC_OR_VIEW = {
    "empty", "empty_like", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like",
    "empty_strided", "arange", "tensor", "as_strided", "contiguous", "view", "reshape", "flatten",
    "unsqueeze", "squeeze", "size", "stride", "numel", "dim", "t", "transpose", "permute",
    "expand", "is_contiguous", "data_ptr", "device", "dtype", "cdiv", "next_power_of_2",
    "float", "to", "item",
}
_BLOCK_KW = re.compile(r"\b(BLOCK\w*|block\w*|bm|bn|bk|TILE\w*|tile\w*)\s*=\s*(\d+)")
_WARPS = re.compile(r"\b(?:num_warps|warps)\s*=\s*(\d+)")
_STAGES = re.compile(r"\b(?:num_stages|stages)\s*=\s*(\d+)")
_CUDA_BLOCK = re.compile(r"\b(?:threads|block_size|BLOCK_SIZE|blockDim)\w*\s*=\s*(\d+)")


def _count(pattern: str, text: str) -> int:
    return len(re.findall(pattern, text))


@functools.lru_cache(maxsize=4096)
def _tree(source: str) -> ast.Module | None:
    """`source` parsed (None: it does not parse). Shared by the analyses below, which only read
    it: a candidate's source is parsed once, a problem's once for all its candidates."""
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


@dataclass(frozen=True)
class _Index:
    """The nodes of a parsed source the analyses below look for, in `ast.walk` order: the
    classes by name, single-name assignments and subscripts (one walk of the whole tree)."""

    classes: dict[str, list[ast.ClassDef]]
    assigns: list[ast.Assign]
    subscripts: list[ast.Subscript]


@functools.lru_cache(maxsize=4096)
def _index(source: str) -> _Index | None:
    tree = _tree(source)
    if tree is None:
        return None
    classes: dict[str, list[ast.ClassDef]] = {}
    assigns, subscripts = [], []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            classes.setdefault(node.name, []).append(node)
        elif isinstance(node, ast.Assign):
            assigns.append(node)
        elif isinstance(node, ast.Subscript):
            subscripts.append(node)
    return _Index(classes, assigns, subscripts)


def _forwards(index: _Index, class_name: str) -> list[ast.FunctionDef]:
    return [fn for node in index.classes.get(class_name, []) for fn in node.body
            if isinstance(fn, ast.FunctionDef) and fn.name == "forward"]


def _forward_calls(source: str, class_name: str) -> tuple[list[str], bool]:
    """Names of the calls in `class_name.forward` (dotted, e.g. "torch.relu", "self.fc") and
    whether the source parsed."""
    names, ok = _forward_calls_cached(source, class_name)
    return list(names), ok


@functools.lru_cache(maxsize=4096)
def _forward_calls_cached(source: str, class_name: str) -> tuple[tuple[str, ...], bool]:
    index = _index(source)
    if index is None:
        return (), False
    names = [_dotted(call.func) for fn in _forwards(index, class_name) for call in ast.walk(fn)
             if isinstance(call, ast.Call)]
    return tuple(names), True


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif isinstance(node, ast.Subscript):  # kernel[grid](...)
        parts.append(_dotted(node.value) + "[]")
    return ".".join(reversed(parts))


def _compute_ops(calls: Sequence[str]) -> int:
    """Calls that do arithmetic: torch/F ops and submodule calls, not allocation or views."""
    n = 0
    for c in calls:
        last = c.rsplit(".", 1)[-1]
        if last in _ALLOC_OR_VIEW or c.endswith("[]"):
            continue
        if c.startswith(("torch.", "F.", "nn.functional.", "self.")):
            n += 1
    return n


def _tuple_len(node: ast.AST) -> int:
    if isinstance(node, ast.Tuple):
        return len(node.elts)
    if isinstance(node, ast.Lambda):
        return _tuple_len(node.body)
    return 0


def _grid_dims(source: str, kernels: Sequence[str]) -> int:
    """Largest launch-grid rank over `kernel[grid](...)` launches (1 when unknown)."""
    index = _index(source)
    if index is None:
        return 1
    assigned: dict[str, int] = {}
    for node in index.assigns:
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            n = _tuple_len(node.value)
            if n:
                assigned[node.targets[0].id] = n
    dims = [1]
    for node in index.subscripts:
        if _dotted(node.value) in kernels:
            sl = node.slice
            dims.append(_tuple_len(sl) or (assigned.get(sl.id, 1) if isinstance(sl, ast.Name) else 1))
    return max(dims)


def _jit_kernels(source: str) -> list[str]:
    return re.findall(r"@triton\.jit[^\n]*\n(?:\s*@[^\n]*\n)*\s*def\s+(\w+)", source)


def _launch_keywords(source: str) -> dict[str, list[int]]:
    """Integer keyword arguments of the calls in `ModelNew` (where a candidate picks its tile
    sizes and warps), e.g. {"BLOCK": [1024], "num_warps": [4]}."""
    index = _index(source)
    if index is None:
        return {}
    out: dict[str, list[int]] = {}
    for node in index.classes.get("ModelNew", []):
        for call in ast.walk(node):
            if isinstance(call, ast.Call):
                for kw in call.keywords:
                    if kw.arg and isinstance(kw.value, ast.Constant) \
                            and isinstance(kw.value.value, int) \
                            and not isinstance(kw.value.value, bool):
                        out.setdefault(kw.arg, []).append(kw.value.value)
    return out


def _tuning(src: str) -> tuple[list[int], list[int], list[int]]:
    """(block sizes, warps, stages): from ModelNew's own call keywords when it sets them,
    else from anywhere in the source (launch sites, helper defaults)."""
    kws = _launch_keywords(src)
    text = " ".join(f"{k}={v}" for k, vs in kws.items() for v in vs)
    blocks = [int(v) for _, v in _BLOCK_KW.findall(text)]
    warps = [int(v) for v in _WARPS.findall(text)]
    stages = [int(v) for v in _STAGES.findall(text)]
    if not blocks:
        blocks = [int(v) for _, v in _BLOCK_KW.findall(src)] + [int(v) for v in _CUDA_BLOCK.findall(src)]
    blocks = [b for b in blocks if b > 0]  # a 0 (e.g. a flag spelled like a block size) is no tile
    return blocks, warps or [int(v) for v in _WARPS.findall(src)], \
        stages or [int(v) for v in _STAGES.findall(src)]


def source_features(problem: Problem, candidate: Candidate) -> dict[str, float]:
    """Static features of the candidate source against its problem's reference source."""
    src = candidate.source
    kernels = _jit_kernels(src)
    n_cuda_kernels = _count(r"__global__", src)
    n_launch = sum(_count(rf"\b{re.escape(k)}\s*\[", src) for k in kernels) + _count(r"<<<", src)
    cand_calls, parse_ok = _forward_calls(src, "ModelNew")
    ref_calls, _ = _forward_calls(problem.source, "Model")
    ref_ops = max(1, _compute_ops(ref_calls))
    torch_left = _compute_ops([c for c in cand_calls if not c.startswith("self.")])
    blocks, warps, stages = _tuning(src)
    n_kernels = len(kernels) + n_cuda_kernels
    launches = max(n_launch, n_kernels)
    # Loops inside kernels: Python `for`/`while` in Triton, C `for (` in CUDA source strings.
    loops = _count(r"^\s*(?:for|while)\b[^\n]*tl\.|for\s+\w+\s+in\s+(?:tl\.)?(?:range|static_range)",
                   src) + _count(r"\bfor\s*\(", src)
    return {
        "parse_ok": float(parse_ok),
        "n_load": float(_count(r"tl\.load\(", src)),
        "n_store": float(_count(r"tl\.store\(", src)),
        "n_dot": float(_count(r"tl\.dot\(", src) + _count(r"\bwmma::|mma_sync|cublas", src)),
        "n_reduce": float(_count(r"tl\.(?:sum|max|min|reduce|argmax|argmin|cumsum|xor_sum)\(", src)),
        "n_atomic": float(_count(r"tl\.atomic_\w+\(|atomic(?:Add|Max|Min|CAS)\(", src)),
        "n_loops": float(loops),
        "n_kernels": float(n_kernels),
        "n_launches": float(launches),
        "fusion_ratio": ref_ops / max(1, launches + torch_left),
        "ref_ops": float(ref_ops),
        "torch_ops_left": float(torch_left),
        "grid_dims": float(_grid_dims(src, kernels)),
        "uses_cdiv": float("cdiv" in src),
        "log2_block_max": math.log2(max(blocks)) if blocks else 0.0,
        "log2_block_prod": math.log2(math.prod(sorted(blocks, reverse=True)[:3])) if blocks else 0.0,
        "num_warps": float(max(warps) if warps else 4.0),
        "num_stages": float(max(stages) if stages else 2.0),
        "has_autotune": float("triton.autotune" in src),
        "backend_triton": float(candidate.backend == "triton"),
        "backend_cuda": float(candidate.backend == "cuda"),
        "backend_torch": float(candidate.backend == "torch"),
        "source_lines": float(len([ln for ln in src.splitlines() if ln.strip()])),
        "ref_source_lines": float(len([ln for ln in problem.source.splitlines() if ln.strip()])),
        "ieee_dot": float("ieee" in src),
    }


def problem_features(problem: Problem, peaks: Peaks) -> dict[str, float]:
    """Analytic size features of the problem and where it sits on this GPU's roofline."""
    flops, nbytes = max(problem.flops, 0.0), max(problem.bytes_moved, 0.0)
    ai = flops / nbytes if nbytes > 0 else 0.0
    known = (flops > 0 or nbytes > 0) and problem.count_source != "unknown"
    floor_ms = 1e3 * max(flops / peaks.flops_for(problem.dtype, True),
                         nbytes / peaks.dram_bytes_s) if known else 0.0
    return {
        "counts_known": float(known),
        # Traced from the reference (`problems.counts`) rather than declared by the file.
        "counts_derived": float(known and problem.count_source == "derived"),
        "log10_flops": math.log10(1 + flops),
        "log10_bytes": math.log10(1 + nbytes),
        "log2_intensity": math.log2(1 + ai),
        "compute_bound": float(known and ai > peaks.ridge),
        "log10_floor_us": log10_us(floor_ms),
        "dtype_fp32": float(problem.dtype == "fp32"),
        "dtype_bf16": float(problem.dtype == "bf16"),
        "dtype_fp16": float(problem.dtype == "fp16"),
        "level": float(problem.level),
    }


_LIBRARY_CALL = re.compile(r"(?:^|\.)(?:matmul|mm|bmm|addmm|baddbmm|linear|einsum|conv[123]d|"
                           r"conv_transpose[123]d|scaled_dot_product_attention|gru|lstm)$")


def _library_calls(source: str) -> int:
    """Vendor-library calls left in `ModelNew.forward`: torch matmul/linear/conv/attention
    calls and `@` operators (the candidate keeps cuBLAS/cuDNN for that part)."""
    calls, ok = _forward_calls(source, "ModelNew")
    # Dotted calls only (torch.matmul, F.linear, x.mm): a bare `matmul(...)` is the
    # candidate's own (Triton) helper.
    n = sum(1 for c in calls if "." in c and not c.startswith("self.") and _LIBRARY_CALL.search(c))
    index = _index(source) if ok else None
    if index is not None:
        n += sum(isinstance(b, ast.BinOp) and isinstance(b.op, ast.MatMult)
                 for fn in _forwards(index, "ModelNew") for b in ast.walk(fn))
    return n


def log10_us(ms: float) -> float:
    """A time in ms as a `log10_*_us` feature value: log10(1 + microseconds)."""
    return math.log10(1 + 1e3 * ms)


def ms_of_log10_us(value):
    """The inverse of `log10_us` (ms of a `log10_*_us` value), element-wise on arrays."""
    return (10.0 ** np.asarray(value, dtype=float) - 1.0) / 1e3


def _log2(x: float) -> float:
    return math.log2(x) if x > 0 else 0.0


def relative_features(problem: Problem, candidate: Candidate, peaks: Peaks,
                      f: dict[str, float]) -> dict[str, float]:
    """Candidate against reference on this GPU: what the reference launches (traced on the
    meta device, `reference_profile`), its roofline time, and the candidate's ideal time.

    `f` holds the source and problem features already computed. Times are hardware-relative
    (each GPU's own peaks), so a model trained on one GPU reads another GPU's rows on the
    same scale. `log2_ideal_speedup` = log2(reference roofline ms / candidate ideal ms), where
    the candidate's ideal is the larger of the analytic floor at 80% of peak (tensor-core peak
    only with `tl.dot` on bf16/fp16 inputs or outside IEEE mode) and the reference's library
    time (a candidate matches cuBLAS/cuDNN at best, faster only by a better peak), plus its
    launches.
    """
    prof = reference_profile.profile(problem)
    ref = reference_profile.reference_time(prof, peaks, LAUNCH_MS)
    ref_launches = prof.launches if prof.launches else int(f["ref_ops"])
    flops, nbytes = max(problem.flops, 0.0), max(problem.bytes_moved, 0.0)
    # `input_precision="ieee"` only pins fp32 inputs to full precision: a bf16/fp16 tl.dot runs
    # on tensor cores whatever the flag (zoo kernels pick IEEE=<dtype is fp32> at launch).
    tensor_cores = f["n_dot"] > 0 and (problem.dtype in ("bf16", "fp16") or not f["ieee_dot"])
    floor_ms = 1e3 * max(flops / peaks.flops_for(problem.dtype, tensor_cores),
                         nbytes / peaks.dram_bytes_s)
    ref_ms = max(ref.ms, floor_ms / reference_profile.OTHER_EFFICIENCY + ref_launches * LAUNCH_MS)
    lib_calls = _library_calls(candidate.source)
    n_lib = sum(prof.counts.get(c, 0) for c in ("matmul", "conv", "attention"))
    cand_launches = max(1.0, f["n_launches"] + f["torch_ops_left"])
    # The library part (matmul / conv / attention) runs at best at the vendor kernel's
    # efficiency: as in the reference when the candidate still calls the library, scaled by
    # the peak ratio when it does the work itself (tensor cores in Triton vs a reference
    # without them speed it up; CUDA cores vs tensor cores slow it down).
    ref_peak = peaks.flops_for(problem.dtype, problem.dtype in ("bf16", "fp16"))
    kept = min(1.0, lib_calls / n_lib) if n_lib else 0.0
    lib_ms = ref.library_ms * (kept + (1.0 - kept) * ref_peak
                               / peaks.flops_for(problem.dtype, tensor_cores))
    cand_ms = max(floor_ms / 0.8, lib_ms) + cand_launches * LAUNCH_MS
    shapes = prof.input_shapes
    biggest = float(math.prod(shapes[0])) if shapes and shapes[0] else 0.0
    last_dim = float(shapes[0][-1]) if shapes and shapes[0] else 0.0
    out = {
        "ref_traced": float(prof.traced),
        "ref_log2_launches": _log2(float(ref_launches)),
        "ref_log10_us": log10_us(ref_ms),
        "ref_library_share": ref.library_share,
        "ref_launch_share": ref_launches * LAUNCH_MS / ref_ms if ref_ms > 0 else 0.0,
        "ref_log2_bytes_ratio": _log2(prof.total_bytes / nbytes) if nbytes > 0 and prof.ops else 0.0,
        # Without counts the candidate's floor is 0 and the ratio would only measure that
        # zero: no information, so 0.
        "log2_ideal_speedup": _log2(ref_ms / cand_ms)
        if cand_ms > 0 and ref_ms > 0 and f["counts_known"] else 0.0,
        "log2_launch_ratio": _log2(ref_launches / cand_launches) if ref_launches else 0.0,
        "cand_tensor_cores": float(tensor_cores),
        "cand_library_calls": float(lib_calls),
        "ref_lacks_tensor_cores": float(problem.dtype == "fp32" and n_lib > 0),
        "log2_input_elems": _log2(biggest),
        "log2_last_dim": _log2(last_dim),
        "block_vs_last_dim": (f["log2_block_max"] - _log2(last_dim))
        if f["log2_block_max"] > 0 and last_dim > 0 else 0.0,
        "log2_elems_per_tile": (_log2(biggest) - f["log2_block_prod"])
        if f["log2_block_prod"] > 0 and biggest > 0 else 0.0,
        "log10_bytes_per_launch": math.log10(1 + nbytes / cand_launches),
        "log10_flops_per_launch": math.log10(1 + flops / cand_launches),
    }
    for cls in reference_profile.CLASSES:
        out[f"ref_n_{cls}"] = float(prof.counts.get(cls, 0))
    return out


def hardware_features(peaks: Peaks) -> dict[str, float]:
    return {"hw_sm_count": float(peaks.sm_count), "hw_bandwidth_tbs": peaks.dram_bytes_s / 1e12,
            "hw_fp32_tflops": peaks.fp32_flops / 1e12, "hw_bf16_tflops": peaks.bf16_flops / 1e12}


_FEATURE_CACHE: "OrderedDict[tuple, dict[str, float]]" = OrderedDict()
_CACHE_LOCK = threading.Lock()
#: Triples whose features this process keeps in memory (least recently computed out first).
MEMORY_ENTRIES = 20_000


def content_key(problem: Problem, candidate: Candidate, hardware: Hardware) -> tuple:
    """What a triple's features depend on: the problem's source, counts, their provenance, dtype
    and level, the candidate's source and backend, the hardware's key and fingerprint."""
    return (problem.source_hash, problem.flops, problem.bytes_moved, problem.count_source, problem.dtype,
            problem.level, hashlib.sha1(candidate.source.encode()).hexdigest(), candidate.backend,
            hardware.key, hardware.fingerprint)


def _remember(key: tuple, values: dict[str, float]) -> None:
    with _CACHE_LOCK:
        _FEATURE_CACHE[key] = dict(values)
        while len(_FEATURE_CACHE) > MEMORY_ENTRIES:
            _FEATURE_CACHE.popitem(last=False)


def _compute(problem: Problem, candidate: Candidate, hardware: Hardware) -> dict[str, float]:
    peaks = peaks_for(hardware)
    out = source_features(problem, candidate)
    out.update(problem_features(problem, peaks))
    out.update(relative_features(problem, candidate, peaks, out))
    out.update(hardware_features(peaks))
    return out


def features(problem: Problem, candidate: Candidate, hardware: Hardware) -> dict[str, float]:
    """Every feature of one triple, keyed by name (order: `FEATURE_NAMES`).

    Results are kept in memory (`MEMORY_ENTRIES`) by the triple's `content_key`."""
    return dict(_memory_or_compute(content_key(problem, candidate, hardware), problem, candidate, hardware)[0])


def _memory_or_compute(key: tuple, problem: Problem, candidate: Candidate,
                       hardware: Hardware) -> tuple[dict[str, float], bool]:
    """(the triple's features from memory, else computed and remembered; whether computed)."""
    with _CACHE_LOCK:
        hit = _FEATURE_CACHE.get(key)
    if hit is not None:
        return hit, False
    out = _compute(problem, candidate, hardware)
    _remember(key, out)
    return out, True


def _names() -> tuple[str, ...]:
    p = Problem(id="L0/x", level=0, name="x", source="")
    c = Candidate(id="x", problem_id="L0/x", source="")
    return tuple(features(p, c, Hardware(key="h100", name="h100")))


#: Feature names in matrix column order.
FEATURE_NAMES: tuple[str, ...] = _names()


def feature_matrix(rows: Sequence[tuple[Problem, Candidate, Hardware]]) -> np.ndarray:
    """(n, len(FEATURE_NAMES)) float matrix of the triples' features.

    Rows this process has not computed are read from the machine's feature store
    (`workbench.forecast.feature_store`) where it holds them; the rest are computed and stored,
    so the same candidates cost a parse and a trace once per machine, not once per fit."""
    out = np.zeros((len(rows), len(FEATURE_NAMES)))
    keys = [content_key(p, c, h) for p, c, h in rows]
    with _CACHE_LOCK:
        missing = [i for i, k in enumerate(keys) if k not in _FEATURE_CACHE]
    store = feature_store.default_store(FEATURE_NAMES) if missing else None
    stored: dict[tuple, str] = {}
    if store is not None:
        stored = {keys[i]: feature_store.row_key(keys[i], FEATURE_NAMES) for i in missing}
        found = store.get_many(stored.values())
        for key, disk_key in stored.items():
            if disk_key in found:
                _remember(key, dict(zip(FEATURE_NAMES, found[disk_key])))
    computed: dict[str, list[float]] = {}
    for i, (p, c, h) in enumerate(rows):
        values, fresh = _memory_or_compute(keys[i], p, c, h)
        out[i] = [values[k] for k in FEATURE_NAMES]
        if fresh and keys[i] in stored:
            computed[stored[keys[i]]] = list(out[i])
    if store is not None and computed:
        store.put_many(computed)
    return out
