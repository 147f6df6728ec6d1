"""Matmul chains with epilogues: a plain matmul, a linear layer with bias and activation, an MLP of
several linear layers, a gated (SwiGLU) MLP, a pre-norm MLP block with a residual.

Every linear layer of a point uses the point's configuration. Design choices:
- `algo`: `tiled` (one program per output tile), `persistent` (132 programs loop over the
  tiles), `splitk` (SPLIT programs per tile each take a slice of K and add into an fp32 buffer
  with atomics; the epilogue runs after).
- `bm`, `bn`, `bk`: the tile; `warps`; `stages` (software pipelining of the K loop);
  `group`: tile order (1: row-major over tiles; 8: grouped so that 8 row-tiles share B in L2).
- `split`: slices of K for splitk (1 otherwise).
- `epilogue`: `fused` applies bias, activation, gate and residual in the matmul's epilogue;
  `separate` writes fp32 products and applies them in an elementwise kernel (splitk always
  does). A gated MLP's `fused` computes both gate products in one kernel.
Constraints: the tile fits the full-size problem, shared memory (stages x (A + B tiles)) fits
`SMEM_LIMIT_BYTES`, the fp32 accumulators fit the registers, split-K slices are at least two
K-tiles long.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.families.base import SMEM_LIMIT_BYTES, Family, Param

HEADER = """import torch
import torch.nn as nn
import triton
import triton.language as tl
"""
ACTS = {
    "none": "acc",
    "relu": "tl.maximum(acc, 0.0)",
    "gelu_erf": "0.5 * acc * (1.0 + tl.math.erf(acc * 0.7071067811865476))",
    "gelu_tanh": "acc * (1.0 - 1.0 / (1.0 + tl.exp(1.5957691216057308 * (acc + 0.044715 * acc * acc * acc))))",
    "silu": "acc / (1.0 + tl.exp(-acc))",
    "hardtanh": "tl.minimum(tl.maximum(acc, -1.0), 1.0)",
}
ELEMENT_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2}
PERSISTENT_PROGRAMS = 132


@dataclass(frozen=True)
class Layer:
    """One linear layer: weight attribute (nn.Linear layout (N, K)), bias or not, activation,
    residual (add the block's input), gate (a second weight multiplied after silu: SwiGLU)."""

    weight: str
    bias: bool = True
    act: str = "none"
    residual: bool = False
    gate: str | None = None


@dataclass(frozen=True)
class MatmulSpec:
    """`layers` empty: forward(a, b) = a @ b. `norm`: a LayerNorm module attribute applied to
    the input first (fixed kernel). `dims`: the full-size (M, N, K) of every layer."""

    problem_id: str
    dtype: str
    dims: tuple[tuple[int, int, int], ...]
    layers: tuple[Layer, ...] = ()
    norm: str | None = None
    doc: str = ""

    @property
    def has_epilogue(self) -> bool:
        return any(ly.bias or ly.act != "none" or ly.residual or ly.gate for ly in self.layers)


def _check(spec: MatmulSpec, d: dict[str, Any]) -> str | None:
    algo = d["algo"]
    if (algo == "splitk") != (d["split"] > 1):
        return "split applies to splitk only"
    if algo == "splitk" and d["epilogue"] != "separate":
        return "split-K products are summed before any epilogue"
    if algo == "persistent" and d["epilogue"] != "fused":
        return "a persistent kernel keeps its epilogue"
    if algo == "splitk" and d["group"] != 1:
        return "split-K tiles are few: no grouping"
    if not spec.has_epilogue and d["epilogue"] == "separate" and algo != "splitk":
        return "no epilogue to separate"
    gated = any(ly.gate for ly in spec.layers)
    b_tiles = 2 if gated and d["epilogue"] == "fused" else 1
    smem = d["stages"] * (d["bm"] * d["bk"] + b_tiles * d["bk"] * d["bn"]) * ELEMENT_BYTES[spec.dtype]
    if smem > SMEM_LIMIT_BYTES:
        return f"{smem} bytes of shared memory"
    threads = 32 * d["warps"]
    per_thread = b_tiles * d["bm"] * d["bn"] // threads
    if per_thread > 128:
        return "accumulators would spill"
    if d["bm"] * d["bn"] < 8 * threads:
        return "fewer than 8 outputs per thread"
    for m, n, k in spec.dims:
        if d["bm"] > m or d["bn"] > n or d["bk"] > k:
            return "tile larger than the full-size problem"
        if d["split"] > 1 and k // d["split"] < 2 * d["bk"]:
            return "split-K slice shorter than two K tiles"
    return None


def _kernel(spec: MatmulSpec, d: dict[str, Any]) -> list[str]:
    fp32 = spec.dtype == "fp32"
    prec = ', input_precision="ieee"' if fp32 else ""
    acts = sorted({ly.act for ly in spec.layers} - {"none"})
    fused = d["epilogue"] == "fused"
    split = d["algo"] == "splitk"
    gated = fused and any(ly.gate for ly in spec.layers)
    sig = ["a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn"]
    if gated:
        sig.append("g_ptr")
    if fused and spec.has_epilogue:
        sig.append("bias_ptr, res_ptr")
    if gated:
        sig.append("GATED: tl.constexpr")
    if fused and spec.has_epilogue:
        sig.append("HAS_BIAS: tl.constexpr, ACT: tl.constexpr, HAS_RES: tl.constexpr")
    sig.append("BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr")
    if split:
        sig.append("SPLIT: tl.constexpr")
    lines = ["@triton.jit", f"def _mm_tile(tile, k_lo, k_hi, {', '.join(sig)}):",
             "    num_m = tl.cdiv(M, BM)", "    num_n = tl.cdiv(N, BN)",
             "    width = GROUP * num_n", "    first = (tile // width) * GROUP",
             "    size = tl.minimum(num_m - first, GROUP)",
             "    pid_m = first + (tile % width) % size", "    pid_n = (tile % width) // size",
             "    rm = pid_m * BM + tl.arange(0, BM)", "    rn = pid_n * BN + tl.arange(0, BN)",
             "    rk = tl.arange(0, BK)", "    acc = tl.zeros((BM, BN), tl.float32)"]
    if gated:
        lines.append("    acc2 = tl.zeros((BM, BN), tl.float32)")
    lines += [f"    for k0 in tl.range(k_lo, k_hi, BK, num_stages={d['stages']}):",
              "        kk = k0 + rk",
              "        a = tl.load(a_ptr + rm[:, None] * sam + kk[None, :] * sak, mask=(rm[:, None] < M) & (kk[None, :] < k_hi), other=0.0)",
              "        b = tl.load(b_ptr + kk[:, None] * sbk + rn[None, :] * sbn, mask=(kk[:, None] < k_hi) & (rn[None, :] < N), other=0.0)",
              f"        acc = tl.dot(a, b, acc{prec})"]
    if gated:
        lines += ["        if GATED:",
                  "            g = tl.load(g_ptr + kk[:, None] * sbk + rn[None, :] * sbn, mask=(kk[:, None] < k_hi) & (rn[None, :] < N), other=0.0)",
                  f"            acc2 = tl.dot(a, g, acc2{prec})"]
    lines.append("    cmask = (rm[:, None] < M) & (rn[None, :] < N)")
    lines.append("    coffs = rm[:, None] * N + rn[None, :]")
    if fused and spec.has_epilogue:
        lines += ["    if HAS_BIAS:", "        acc += tl.load(bias_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]"]
        for i, act in enumerate(acts):
            lines += [f"    if ACT == {i + 1}:", f"        acc = {ACTS[act]}"]
        if gated:
            lines += ["    if GATED:", "        acc = acc / (1.0 + tl.exp(-acc)) * acc2"]
        lines += ["    if HAS_RES:", "        acc += tl.load(res_ptr + coffs, mask=cmask, other=0.0).to(tl.float32)"]
    if split:
        lines.append("    tl.atomic_add(c_ptr + coffs, acc, mask=cmask)")
    else:
        lines.append("    tl.store(c_ptr + coffs, acc.to(c_ptr.dtype.element_ty), mask=cmask)")
    return lines


def _driver(spec: MatmulSpec, d: dict[str, Any]) -> list[str]:
    """The @triton.jit entry kernel: the grid's programs map onto tiles (and K slices)."""
    fused = d["epilogue"] == "fused"
    gated = fused and any(ly.gate for ly in spec.layers)
    split = d["algo"] == "splitk"
    params = "a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn"
    call = params
    if gated:
        params, call = params + ", g_ptr", call + ", g_ptr"
    if fused and spec.has_epilogue:
        params, call = params + ", bias_ptr, res_ptr", call + ", bias_ptr, res_ptr"
    if gated:
        params, call = params + ", GATED: tl.constexpr", call + ", GATED"
    if fused and spec.has_epilogue:
        params += ", HAS_BIAS: tl.constexpr, ACT: tl.constexpr, HAS_RES: tl.constexpr"
        call += ", HAS_BIAS, ACT, HAS_RES"
    params += ", BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr"
    call += ", BM, BN, BK, GROUP"
    if split:
        params += ", SPLIT: tl.constexpr"
        call += ", SPLIT"
        body = ["span = tl.cdiv(tl.cdiv(K, SPLIT), BK) * BK", "k_lo = tl.program_id(1) * span",
                f"_mm_tile(tl.program_id(0), k_lo, tl.minimum(k_lo + span, K), {call})"]
    elif d["algo"] == "persistent":
        body = ["for tile in tl.range(tl.program_id(0), tl.cdiv(M, BM) * tl.cdiv(N, BN), tl.num_programs(0)):",
                f"    _mm_tile(tile, 0, K, {call})"]
    else:
        body = [f"_mm_tile(tl.program_id(0), 0, K, {call})"]
    return ["@triton.jit", f"def _mm_kernel({params}):"] + ["    " + ln for ln in body]


def _epilogue_kernel(spec: MatmulSpec) -> list[str]:
    acts = sorted({ly.act for ly in spec.layers} - {"none"})
    lines = ["@triton.jit",
             "def _epilogue(c_ptr, y_ptr, g_ptr, bias_ptr, res_ptr, n_elements, N, GATED: tl.constexpr, HAS_BIAS: tl.constexpr, "
             "ACT: tl.constexpr, HAS_RES: tl.constexpr, BLOCK: tl.constexpr):",
             "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)", "    mask = offs < n_elements",
             "    acc = tl.load(c_ptr + offs, mask=mask, other=0.0)",
             "    if HAS_BIAS:", "        acc += tl.load(bias_ptr + offs % N, mask=mask, other=0.0).to(tl.float32)"]
    for i, act in enumerate(acts):
        lines += [f"    if ACT == {i + 1}:", f"        acc = {ACTS[act]}"]
    lines += ["    if GATED:", "        acc = acc / (1.0 + tl.exp(-acc)) * tl.load(g_ptr + offs, mask=mask, other=0.0)",
              "    if HAS_RES:", "        acc += tl.load(res_ptr + offs, mask=mask, other=0.0).to(tl.float32)",
              "    tl.store(y_ptr + offs, acc.to(y_ptr.dtype.element_ty), mask=mask)"]
    return lines


LN_KERNEL = [
    "@triton.jit",
    "def _layer_norm(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):",
    "    row = tl.program_id(0)",
    "    cols = tl.arange(0, BLOCK)",
    "    m = cols < n_cols",
    "    x = tl.load(x_ptr + row * n_cols + cols, mask=m, other=0.0).to(tl.float32)",
    "    mean = tl.sum(x, axis=0) / n_cols",
    "    c = tl.where(m, x - mean, 0.0)",
    "    rstd = 1.0 / tl.sqrt(tl.sum(c * c, axis=0) / n_cols + eps)",
    "    w = tl.load(w_ptr + cols, mask=m, other=0.0).to(tl.float32)",
    "    b = tl.load(b_ptr + cols, mask=m, other=0.0).to(tl.float32)",
    "    tl.store(y_ptr + row * n_cols + cols, (c * rstd * w + b).to(y_ptr.dtype.element_ty), mask=m)",
]


def _linear_fn(spec: MatmulSpec, d: dict[str, Any]) -> list[str]:
    """The launcher `_linear(a, w, bias, act, res, gate)`: y = epilogue(a @ w^T) (w: (N, K)), or
    a @ w for `w_is_kn` (the plain matmul's (K, N) operand)."""
    fused = d["epilogue"] == "fused"
    split = d["algo"] == "splitk"
    gated_fused = fused and any(ly.gate for ly in spec.layers)
    acts = sorted({ly.act for ly in spec.layers} - {"none"})
    codes = ", ".join(f'"{a}": {i + 1}' for i, a in enumerate(acts))
    cfg = f"BM={d['bm']}, BN={d['bn']}, BK={d['bk']}, GROUP={d['group']}"
    lines = [f"_ACT = {{{codes}}}", "", "",
             "def _linear(a, w, bias=None, act=\"none\", res=None, gate=None, w_is_kn=False):",
             "    M, K = a.shape",
             "    if w_is_kn:",
             "        N = w.shape[1]",
             "        sbk, sbn = w.stride(0), w.stride(1)",
             "    else:",
             "        N = w.shape[0]",
             "        sbk, sbn = w.stride(1), w.stride(0)",
             "    y = torch.empty((M, N), dtype=a.dtype, device=a.device)",
             "    if M == 0 or N == 0:",
             "        return y",
             f"    tiles = triton.cdiv(M, {d['bm']}) * triton.cdiv(N, {d['bn']})"]
    if d["algo"] == "persistent":
        grid = f"(min(tiles, {PERSISTENT_PROGRAMS}),)"
    elif split:
        grid = f"(tiles, {d['split']})"
    else:
        grid = "(tiles,)"
    extra = f", SPLIT={d['split']}" if split else ""
    if fused:
        args = ["a", "w", "y", "M", "N", "K", "a.stride(0)", "a.stride(1)", "sbk", "sbn"]
        kws = []
        if gated_fused:
            args.append("gate if gate is not None else w")
            kws.append("GATED=gate is not None")
        if spec.has_epilogue:
            args += ["bias if bias is not None else a", "res if res is not None else a"]
            kws += ["HAS_BIAS=bias is not None", "ACT=_ACT.get(act, 0)", "HAS_RES=res is not None"]
        args += kws
        lines += [f"    _mm_kernel[{grid}]({', '.join(args)}, {cfg}{extra}, num_warps={d['warps']})", "    return y"]
        return lines
    alloc = "torch.zeros" if split else "torch.empty"
    lines += [f"    c = {alloc}((M, N), dtype=torch.float32, device=a.device)",
              f"    _mm_kernel[{grid}](a, w, c, M, N, K, a.stride(0), a.stride(1), sbk, sbn, {cfg}{extra}, num_warps={d['warps']})",
              "    g = None",
              "    if gate is not None:",
              f"        g = {alloc}((M, N), dtype=torch.float32, device=a.device)",
              f"        _mm_kernel[{grid}](a, gate, g, M, N, K, a.stride(0), a.stride(1), sbk, sbn, {cfg}{extra}, "
              f"num_warps={d['warps']})",
              "    n = M * N",
              "    _epilogue[(triton.cdiv(n, 1024),)](c, y, g if g is not None else c, bias if bias is not None else c, "
              "res if res is not None else c, n, N, GATED=g is not None, HAS_BIAS=bias is not None, "
              "ACT=_ACT.get(act, 0), HAS_RES=res is not None, BLOCK=1024, num_warps=4)",
              "    return y"]
    return lines


def _render(spec: MatmulSpec, d: dict[str, Any]) -> str:
    fused = d["epilogue"] == "fused"
    parts = [HEADER, "", "\n".join(_kernel(spec, d)), "", "", "\n".join(_driver(spec, d))]
    if not fused:
        parts += ["", "", "\n".join(_epilogue_kernel(spec))]
    if spec.norm:
        parts += ["", "", "\n".join(LN_KERNEL)]
    parts += ["", "", "\n".join(_linear_fn(spec, d)), "", ""]
    init = ["        super().__init__()"]
    if spec.layers or spec.norm:
        init.append("        # Placeholders: the executor copies the reference's parameters in by name.")
    if spec.norm:
        init.append(f"        self.{spec.norm} = nn.LayerNorm(1)")
    for ly in spec.layers:
        init.append(f"        self.{ly.weight} = nn.Linear(1, 1, bias={ly.bias})")
        if ly.gate:
            init.append(f"        self.{ly.gate} = nn.Linear(1, 1, bias=False)")
    if not spec.layers:
        fwd = ["    def forward(self, a, b):", "        return _linear(a.contiguous(), b.contiguous(), w_is_kn=True)"]
    else:
        fwd = ["    def forward(self, x):", "        shape = x.shape", "        x = x.contiguous().view(-1, shape[-1])", "        h = x"]
        if spec.norm:
            fwd += ["        h = torch.empty_like(x)",
                    f"        _layer_norm[(x.shape[0],)](x, self.{spec.norm}.weight, self.{spec.norm}.bias, h, x.shape[1], "
                    f"self.{spec.norm}.eps, BLOCK=triton.next_power_of_2(x.shape[1]), num_warps=4)"]
        for ly in spec.layers:
            bias = f"self.{ly.weight}.bias" if ly.bias else "None"
            gate = f"self.{ly.gate}.weight" if ly.gate else "None"
            res = "x" if ly.residual else "None"
            fwd.append(f"        h = _linear(h, self.{ly.weight}.weight, bias={bias}, act=\"{ly.act}\", res={res}, gate={gate})")
        fwd.append("        return h.view(*shape[:-1], h.shape[-1])")
    parts.append("\n".join(["class ModelNew(nn.Module):", "    def __init__(self):", *init, "", *fwd]))
    return "\n".join(parts) + "\n"


def matmul_family(spec: MatmulSpec) -> Family:
    params = (Param("algo", ("tiled", "persistent", "splitk")), Param("bm", (64, 128, 256)),
              Param("bn", (64, 128, 256)), Param("bk", (32, 64, 128)), Param("warps", (4, 8)),
              Param("stages", (2, 3, 4)), Param("group", (1, 8)), Param("split", (1, 2, 4)),
              Param("epilogue", ("fused", "separate")))
    return Family(name=f"matmul:{spec.problem_id}", kind="matmul", problem_id=spec.problem_id, params=params,
                  render_fn=lambda d: _render(spec, d), check_fn=lambda d: _check(spec, d),
                  doc=spec.doc or "Matmul with epilogue")
