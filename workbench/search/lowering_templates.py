"""Triton templates that `lowering` renders for its family kinds: a `@triton.jit` kernel and
its launcher per group.

Every kernel computes in fp32 and stores in the output's dtype. Launchers take the tensors the
reference passes (any layout, any size: every size is read from the tensors at run time) and
the op's constant arguments; the launcher of group `i` is named `_lowered_{i}` (the generated
`forward` calls it). Tile sizes, warps and stages are literal integers at each launch, so the
search's mutation operators (and `workbench.seeds.space`) tune them.

Layouts:
- elementwise (`ew`): one flat index over the output; each input is broadcast to the output's
  shape (`expand`, stride 0) and read through its strides, or at the flat index itself when it
  is contiguous in the output's shape (a constexpr per input);
- matmul (`mm`): C[b] = A[b] @ B[b] (+ bias) over a (batch, M, N) view of the output, operands
  and epilogue inputs read through their strides, the elementwise chain that consumes the
  product fused in the epilogue; IEEE fp32 products for fp32 unless the group allows TF32;
- along one axis (`reduce`, `softmax`): the input viewed as (outer, R, inner) with the reduced
  dims in the middle (permuted there first when they are not adjacent); a program takes one
  outer index and BLOCK_I inner columns and walks R in BLOCK_R chunks;
- row norms (`norm`): (rows, cols) rows normalised by their own statistics, with an optional
  per-channel affine whose channel is `(row % ROW_GROUPS) * CH_PER_ROW + col // SPATIAL` (layer
  norm: the column; group norm: the group's channels; instance norm: the row's channel).
"""
from __future__ import annotations

import os
from typing import Any

from workbench.seeds.tlib_nn import NORM_BODY

#: Launch sizes per template: on a GPU, and in Triton's interpreter (`TRITON_INTERPRET=1`, the CPU
#: path), where a program's cost is mostly Python overhead, so a few large tiles run far faster
#: than many small ones. Seeds are rendered for the executor they will run on.
_TILES = {
    "gpu": {"EW": 1024, "BM": 64, "BN": 64, "BK": 32, "ROWS": 4, "RBLOCK": 1024, "CBLOCK_R": 64,
            "CBLOCK_I": 16, "NORM_ROWS": 1, "NORM_BLOCK": 1024},
    # The interpreter's row and column tiles are expressions of the sizes (`_Axis.launch`, `render_norm`).
    "interpreter": {"EW": 262144, "BM": 128, "BN": 128, "BK": 128},
}


def interpreted() -> bool:
    """Whether Triton runs in its interpreter in this process (the CPU executor's mode)."""
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def tile(name: str) -> int:
    """The launch size `name` for this process's executor (see `_TILES`)."""
    return _TILES["interpreter" if interpreted() else "gpu"][name]


_EW = '''@triton.jit
def _ew_kernel_{i}({ptrs}, out_ptr, n, {shape_params}{stride_params}{flags}BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
{index}
{loads}
{body}
    tl.store(out_ptr + offs, v{last}.to(out_ptr.dtype.element_ty), mask=mask)


def _lowered_{i}({args}):
{prep}
    shape = {shape}
{expand}
    out = torch.empty(shape, dtype={dtype}, device=x0.device)
    n = out.numel()
    if n == 0:
        return out
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    _ew_kernel_{i}[grid]({call_args}, out, n, {shape_args}{stride_args}{flag_args}BLOCK={block}, num_warps=4)
    return out
'''


def _dims(rank: int) -> list[str]:
    return [f"d{k}" for k in range(rank)]


def render_ew(i: int, inputs: int, body: list[str], rank: int, dtype: str, shape: str,
              prep: list[str] | None = None) -> str:
    """An elementwise chain over `inputs` tensors x0.. broadcast to `shape` (a Python expression
    over the launcher's arguments) of `rank` dims, storing v{last} in `dtype`."""
    ptrs = ", ".join(f"x{j}_ptr" for j in range(inputs))
    args = ", ".join(f"x{j}" for j in range(inputs))
    dims = _dims(rank)
    index: list[str] = []
    if rank > 1:
        index.append("    r = offs")
        for k in range(rank - 1, 0, -1):
            index.append(f"    {dims[k]} = r % S{k}")
            index.append(f"    r = r // S{k}")
        index.append(f"    {dims[0]} = r")
    loads = []
    for j in range(inputs):
        strided = " + ".join(f"{dims[k]} * st{j}_{k}" for k in range(rank)) if rank else "0"
        if rank <= 1:
            strided = f"offs * st{j}_0" if rank == 1 else "offs * 0"
        loads.append(f"    if PLAIN{j}:\n        o{j} = offs\n    else:\n        o{j} = {strided}")
        loads.append(f"    x{j} = tl.load(x{j}_ptr + o{j}, mask=mask, other=0).to(tl.float32)")
    shape_params = "".join(f"S{k}, " for k in range(1, rank))
    stride_params = "".join(f"st{j}_{k}, " for j in range(inputs) for k in range(rank))
    flags = "".join(f"PLAIN{j}: tl.constexpr, " for j in range(inputs))
    prep_lines = list(prep or []) or ["pass"]
    expand = [f"x{j} = x{j}.expand(shape)" for j in range(inputs)]
    shape_args = "".join(f"shape[{k}], " for k in range(1, rank))
    stride_args = "".join(f"x{j}.stride({k}), " for j in range(inputs) for k in range(rank))
    flag_args = "".join(f"PLAIN{j}=x{j}.is_contiguous(), " for j in range(inputs))
    return _EW.format(i=i, ptrs=ptrs, shape_params=shape_params, stride_params=stride_params, flags=flags,
                      index="\n".join(index), loads="\n".join(loads), body="\n".join("    " + b for b in body),
                      last=len(body) - 1, args=args, shape=shape, dtype=dtype,
                      prep="\n".join("    " + p for p in prep_lines), call_args=args, shape_args=shape_args,
                      stride_args=stride_args, flag_args=flag_args, block=tile("EW"),
                      expand="\n".join("    " + e for e in expand))


# --------------------------------------------------------------------------- matmul
_MM = '''@triton.jit
def _mm_kernel_{i}(a_ptr, b_ptr, bias_ptr, {eptrs}out_ptr, M, N, K, sab, sam, sak, sbb, sbk, sbn,
                  {estrides}HAS_BIAS: tl.constexpr, TF32: tl.constexpr, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    bid = tl.program_id(2).to(tl.int64)
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_base = a_ptr + bid * sab
    b_base = b_ptr + bid * sbb
    acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + rk
        a = tl.load(a_base + rm[:, None] * sam + ks[None, :] * sak,
                    mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_base + ks[:, None] * sbk + rn[None, :] * sbn,
                    mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        if TF32:
            acc = tl.dot(a, b, acc)
        else:
            acc = tl.dot(a, b, acc, input_precision="ieee")
    if HAS_BIAS:
        acc += tl.load(bias_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    v0 = acc
{loads}
{body}
    offs = bid * M * N + rm[:, None].to(tl.int64) * N + rn[None, :]
    tl.store(out_ptr + offs, v{last}.to(out_ptr.dtype.element_ty), mask=mask)


def _lowered_{i}(a, b, bias{eargs}):
    {b_prep}
    K = a.shape[-1]
    N = b.shape[-1]
    if b.dim() == 2 and not {batched_b}:
        lead = a.shape[:-1]
        a3 = a.reshape(1, -1, K)
        b3 = b.unsqueeze(0)
    else:
        lead = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + a.shape[-2:-1]
        a3 = a.expand(*lead, K).reshape(-1, a.shape[-2], K)
        b3 = b.expand(*lead[:-1], K, N).reshape(-1, K, N)
    BT, M = a3.shape[0], a3.shape[1]
    out = torch.empty((*lead, N), dtype=a.dtype, device=a.device)
    if out.numel() == 0:
        return out{squeeze}
    o3 = out.view(BT, M, N)
{eprep}
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]), BT)
    _mm_kernel_{i}[grid](a3, b3, bias if bias is not None else a3, {ecall}out, M, N, K,
                        a3.stride(0) if a3.shape[0] > 1 else 0, a3.stride(1), a3.stride(2),
                        b3.stride(0) if b3.shape[0] > 1 else 0, b3.stride(1), b3.stride(2), {estride_args}
                        HAS_BIAS=bias is not None, TF32={tf32}, BLOCK_M={bm}, BLOCK_N={bn}, BLOCK_K={bk}, num_warps=4)
    return out{squeeze}
'''


def render_mm(i: int, inputs: int, body: list[str], linear: bool, vec_b: bool, vec_a: bool, tf32: bool) -> str:
    """A (batched) matmul with its epilogue chain over `inputs` extra tensors (broadcast to the
    output). `linear`: b is a weight (N, K) used transposed; `vec_b` / `vec_a`: that operand is a
    vector (matrix-vector / vector-matrix product), its size-1 dimension dropped from the output."""
    b_prep = "b = b.t()" if linear else ("b = b.unsqueeze(-1)" if vec_b else "pass")
    if vec_a:
        b_prep += "\n    a = a.unsqueeze(0)"
    squeeze = ".squeeze(-1)" if vec_b else (".squeeze(-2)" if vec_a else "")
    loads = [f"    x{j} = tl.load(x{j}_ptr + bid * e{j}b + rm[:, None] * e{j}m + rn[None, :] * e{j}n, "
             f"mask=mask, other=0).to(tl.float32)" for j in range(inputs)]
    eprep = []
    for j in range(inputs):
        eprep.append(f"    x{j} = x{j}.expand(out.shape).reshape(BT, M, N)")
    return _MM.format(
        i=i, eptrs="".join(f"x{j}_ptr, " for j in range(inputs)),
        estrides="".join(f"e{j}b, e{j}m, e{j}n, " for j in range(inputs)),
        loads="\n".join(loads), body="\n".join("    " + b for b in body), last=len(body),
        eargs="".join(f", x{j}" for j in range(inputs)), b_prep=b_prep, batched_b="False",
        squeeze=squeeze, eprep="\n".join(eprep) or "    pass", ecall="".join(f"x{j}, " for j in range(inputs)),
        estride_args="".join(f"x{j}.stride(0), x{j}.stride(1), x{j}.stride(2), " for j in range(inputs)),
        tf32="True" if tf32 else "False", bm=tile("BM"), bn=tile("BN"), bk=tile("BK"))


# --------------------------------------------------------------------------- along an axis
_AXIS_VIEW = '''def _axis_view_{i}(x, dims, keepdim):
    """x as (outer, R, inner) with `dims` (None: all) reduced, and the reduced output's shape."""
    nd = x.dim()
    dims = sorted({{d % nd for d in dims}}) if dims is not None else list(range(nd))
    keep = [d for d in range(nd) if d not in dims]
    out_shape = [1 if d in dims else x.shape[d] for d in range(nd)] if keepdim else [x.shape[d] for d in keep]
    if dims and dims != list(range(dims[0], dims[0] + len(dims))):
        lead = len([d for d in keep if d < dims[0]])
        x = x.permute(*([d for d in keep if d < dims[0]] + dims + [d for d in keep if d > dims[0]]))
    else:
        lead = dims[0] if dims else nd
    x = x.contiguous()
    outer = R = inner = 1
    for s in x.shape[:lead]:
        outer *= s
    for s in x.shape[lead:lead + len(dims)]:
        R *= s
    for s in x.shape[lead + len(dims):]:
        inner *= s
    return x, R, outer, inner, out_shape
'''


class _Axis:
    """Index code of a kernel that walks R for a tile of independent positions.

    `rows` layout (the reduced dims are the last ones, inner = 1): a program takes ROWS outer
    positions, its tile is [ROWS, BLOCK_R], reduced along axis 1. `cols` layout: a program takes
    one outer position and BLOCK_I inner columns, its tile is [BLOCK_R, BLOCK_I], axis 0."""

    def __init__(self, rows: bool):
        self.rows = rows
        if rows:
            self.params = "n_out, R, ROWS: tl.constexpr, BLOCK_R: tl.constexpr"
            self.setup = ["pos = tl.program_id(0) * ROWS + tl.arange(0, ROWS)", "pmask = pos < n_out",
                          "base = pos.to(tl.int64)[:, None] * R"]
            self.shape, self.axis = "[ROWS, BLOCK_R]", 1
            self.chunk = ["r = r0 + tl.arange(0, BLOCK_R)", "m = pmask[:, None] & (r[None, :] < R)",
                          "offs = base + r[None, :]"]
            self.out_offs = "pos"
            self.ridx = "r[None, :]"
            self.bcast = "[:, None]"
        else:
            self.params = "R, INNER, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr"
            self.setup = ["o = tl.program_id(0).to(tl.int64)",
                          "pos = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)", "pmask = pos < INNER",
                          "base = o * R * INNER"]
            self.shape, self.axis = "[BLOCK_R, BLOCK_I]", 0
            self.chunk = ["r = r0 + tl.arange(0, BLOCK_R)", "m = (r[:, None] < R) & pmask[None, :]",
                          "offs = base + r[:, None] * INNER + pos[None, :]"]
            self.out_offs = "o * INNER + pos"
            self.ridx = "r[:, None]"
            self.bcast = "[None, :]"

    def launch(self, kernel: str, args: str) -> str:
        if interpreted():  # tiles fitted to the sizes: the interpreter pays per program, not per lane
            if self.rows:
                sizes = ("BLOCK_R=min(4096, triton.next_power_of_2(R)), "
                         "ROWS=max(1, min(256, 32768 // min(4096, triton.next_power_of_2(R))))")
            else:
                sizes = ("BLOCK_R=min(256, triton.next_power_of_2(R)), "
                         "BLOCK_I=min(256, triton.next_power_of_2(inner))")
        elif self.rows:
            sizes = f"ROWS={tile('ROWS')}, BLOCK_R={tile('RBLOCK')}"
        else:
            sizes = f"BLOCK_R={tile('CBLOCK_R')}, BLOCK_I={tile('CBLOCK_I')}"
        if self.rows:
            return (f"grid = lambda meta: (triton.cdiv(outer, meta[\"ROWS\"]),)\n"
                    f"    {kernel}[grid]({args}, outer, R, {sizes}, num_warps=4)")
        return (f"grid = lambda meta: (outer, triton.cdiv(inner, meta[\"BLOCK_I\"]))\n"
                f"    {kernel}[grid]({args}, R, inner, {sizes}, num_warps=4)")

    def loop(self, body: list[str]) -> list[str]:
        return ["for r0 in range(0, R, BLOCK_R):"] + ["    " + ln for ln in self.chunk + body]


def _kernel(name: str, params: str, lines: list[str]) -> str:
    return "@triton.jit\n" + f"def {name}({params}):\n" + "\n".join("    " + ln for ln in lines) + "\n"


_REDUCE_OPS = {
    # name: (init / masked-load value, combine(acc, v), final(reduce over the axis))
    "sum": ("0.0", "acc + v", "tl.sum(acc, axis={ax})"),
    "mean": ("0.0", "acc + v", "tl.sum(acc, axis={ax}) / R"),
    "amax": ('-float("inf")', "tl.maximum(acc, v)", "tl.max(acc, axis={ax})"),
    "amin": ('float("inf")', "tl.minimum(acc, v)", "tl.min(acc, axis={ax})"),
    "prod": ("1.0", "acc * v", "tl.reduce(acc, {ax}, _prod_combine)"),
    "norm2": ("0.0", "acc + v * v", "tl.sqrt(tl.sum(acc, axis={ax}))"),
    "norm1": ("0.0", "acc + tl.abs(v)", "tl.sum(acc, axis={ax})"),
    "norminf": ("0.0", "tl.maximum(acc, tl.abs(v))", "tl.max(acc, axis={ax})"),
}

_PROD = """@triton.jit
def _prod_combine(a, b):
    return a * b
"""

_VALUES_INDICES = """class _ValuesIndices:
    \"\"\"What torch.max / torch.min with a dim return: values and indices, by name or position.\"\"\"

    def __init__(self, values, indices):
        self.values, self.indices = values, indices

    def __getitem__(self, k):
        return (self.values, self.indices)[k]

    def __iter__(self):
        return iter((self.values, self.indices))
"""


def render_reduce(i: int, op: str, dims: Any, keepdim: bool, last: bool) -> str:
    """A reduction `op` over `dims` (None: all; `last`: they are the trailing dims). Ops: sum,
    mean, amax, amin, prod, norm2, norm1, norminf, and argmax / argmin / max_dim / min_dim
    (values and first indices)."""
    ax = _Axis(last)
    view = _AXIS_VIEW.format(i=i)
    prep = f"    x, R, outer, inner, out_shape = _axis_view_{i}(x, {dims!r}, {keepdim})"
    if op in ("argmax", "argmin", "max_dim", "min_dim"):
        is_max = op in ("argmax", "max_dim")
        init = '-float("inf")' if is_max else 'float("inf")'
        cmp, top = (">", "tl.max") if is_max else ("<", "tl.min")
        lines = ax.setup + [f"best = tl.full({ax.shape}, {init}, tl.float32)",
                            f"where = tl.zeros({ax.shape}, tl.int64)"]
        lines += ax.loop([f"v = tl.load(x_ptr + offs, mask=m, other={init}).to(tl.float32)",
                          f"take = m & (v {cmp} best)", "best = tl.where(take, v, best)",
                          f"where = tl.where(take, {ax.ridx}.to(tl.int64) + tl.zeros({ax.shape}, tl.int64), where)"])
        lines += [f"top = {top}(best, axis={ax.axis})",
                  "# The first index among the slots holding the extreme value (torch returns the first).",
                  f"idx = tl.min(tl.where(best == tl.expand_dims(top, {ax.axis}), where, R), axis={ax.axis})",
                  f"tl.store(val_ptr + {ax.out_offs}, top.to(val_ptr.dtype.element_ty), mask=pmask)",
                  f"tl.store(idx_ptr + {ax.out_offs}, idx, mask=pmask)"]
        kernel = _kernel(f"_argreduce_kernel_{i}", f"x_ptr, val_ptr, idx_ptr, {ax.params}", lines)
        ret = "_ValuesIndices(vals, idx)" if op.endswith("_dim") else "idx"
        launcher = (f"def _lowered_{i}(x):\n    dtype = x.dtype\n{prep}\n"
                    "    vals = torch.empty(out_shape, dtype=dtype, device=x.device)\n"
                    "    idx = torch.empty(out_shape, dtype=torch.int64, device=x.device)\n"
                    "    if vals.numel() == 0 or R == 0:\n        return " + ret + "\n"
                    f"    {ax.launch(f'_argreduce_kernel_{i}', 'x, vals, idx')}\n    return {ret}\n")
        return "\n\n".join([view, _VALUES_INDICES, kernel, launcher])
    init, combine, final = _REDUCE_OPS[op]
    lines = ax.setup + [f"acc = tl.full({ax.shape}, {init}, tl.float32)"]
    lines += ax.loop([f"v = tl.load(x_ptr + offs, mask=m, other={init}).to(tl.float32)",
                      f"acc = tl.where(m, {combine}, acc)"])
    lines += [f"res = {final.format(ax=ax.axis)}",
              f"tl.store(out_ptr + {ax.out_offs}, res.to(out_ptr.dtype.element_ty), mask=pmask)"]
    kernel = _kernel(f"_reduce_kernel_{i}", f"x_ptr, out_ptr, {ax.params}", lines)
    launcher = (f"def _lowered_{i}(x):\n    dtype = x.dtype\n{prep}\n"
                "    out = torch.empty(out_shape, dtype=dtype, device=x.device)\n"
                "    if out.numel() == 0:\n        return out\n"
                f"    {ax.launch(f'_reduce_kernel_{i}', 'x, out')}\n    return out\n")
    parts = [view] + ([_PROD] if op == "prod" else []) + [kernel, launcher]
    return "\n\n".join(parts)


def render_softmax(i: int, dim: int, log: bool, last: bool) -> str:
    """Softmax (log-softmax with `log`) over one dim (`last`: the last one): three passes over R
    (max, sum of exponentials, write)."""
    ax = _Axis(last)
    red = f"axis={ax.axis}"
    lines = ax.setup + [f"mx = tl.full({ax.shape}, -float(\"inf\"), tl.float32)"]
    lines += ax.loop(["v = tl.load(x_ptr + offs, mask=m, other=-float(\"inf\")).to(tl.float32)",
                      "mx = tl.maximum(mx, v)"])
    lines += [f"top = tl.max(mx, {red})", "top = tl.where(top == -float(\"inf\"), 0.0, top)",
              f"top = tl.expand_dims(top, {ax.axis})", f"acc = tl.zeros({ax.shape}, tl.float32)"]
    lines += ax.loop(["v = tl.load(x_ptr + offs, mask=m, other=-float(\"inf\")).to(tl.float32)",
                      "acc += tl.where(m, tl.exp(v - top), 0.0)"])
    lines += [f"tot = tl.expand_dims(tl.sum(acc, {red}), {ax.axis})"]
    result = "v - top - tl.log(tot)" if log else "tl.exp(v - top) / tot"
    lines += ax.loop(["v = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float32)", f"y = {result}",
                      "tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=m)"])
    kernel = _kernel(f"_softmax_kernel_{i}", f"x_ptr, out_ptr, {ax.params}", lines)
    launcher = (f"def _lowered_{i}(x):\n    shape, dtype = x.shape, x.dtype\n"
                f"    x, R, outer, inner, out_shape = _axis_view_{i}(x, [{dim}], True)\n"
                "    out = torch.empty((outer, R, inner), dtype=dtype, device=x.device)\n"
                "    if out.numel() == 0:\n        return out.view(shape)\n"
                f"    {ax.launch(f'_softmax_kernel_{i}', 'x, out')}\n    return out.view(shape)\n")
    return "\n\n".join([_AXIS_VIEW.format(i=i), kernel, launcher])


# --------------------------------------------------------------------------- row norms
_NORM = '''@triton.jit
def _norm_kernel_{i}(x_ptr, w_ptr, b_ptr, out_ptr, n_rows, n_cols, eps, ROW_GROUPS, CH_PER_ROW, SPATIAL,
                    ROWS: tl.constexpr, BLOCK: tl.constexpr, HAS_W: tl.constexpr, HAS_B: tl.constexpr,
                    RMS: tl.constexpr):
''' + NORM_BODY + '''

def _lowered_{i}(x, w, b):
    shape = x.shape
{rows}
    x2 = x.contiguous().view(-1, n_cols)
    out = torch.empty_like(x2)
    if out.numel() == 0:
        return out.view(shape)
    w = w.reshape(-1) if w is not None else None
    b = b.reshape(-1) if b is not None else None
    n_rows = x2.shape[0]
    grid = lambda meta: (triton.cdiv(n_rows, meta["ROWS"]),)
    _norm_kernel_{i}[grid](x2, w if w is not None else x2, b if b is not None else x2, out, n_rows, n_cols,
                          {eps}, row_groups, ch_per_row, spatial, {sizes},
                          HAS_W=w is not None, HAS_B=b is not None, RMS={rms}, num_warps=4)
    return out.view(shape)
'''

#: How each norm kind cuts the input into rows, and which channel a column's affine takes.
_NORM_ROWS = {
    # normalised over the trailing `ndims` dims; the affine is over those same elements
    "layer": ("n_cols = 1\n    for s in shape[len(shape) - {ndims}:]:\n        n_cols *= s\n"
              "    row_groups, ch_per_row, spatial = 1, 0, 1"),
    # (N, C, *S) in G groups: a row is one group of one sample; channel = g * C/G + col // S
    "group": ("C = shape[1]\n    spatial = 1\n    for s in shape[2:]:\n        spatial *= s\n"
              "    n_cols = C // {groups} * spatial\n    row_groups, ch_per_row = {groups}, C // {groups}"),
    # (N, C, *S): a row is one channel of one sample
    "instance": ("C = shape[1]\n    spatial = 1\n    for s in shape[2:]:\n        spatial *= s\n"
                 "    n_cols = spatial\n    row_groups, ch_per_row = C, 1"),
}


def render_norm(i: int, kind: str, eps: float, ndims: int = 1, groups: int = 1, rms: bool = False) -> str:
    """Layer / RMS norm over the trailing `ndims` dims, group norm in `groups` groups, or
    instance norm; affine when the launcher gets a weight / bias."""
    rows = _NORM_ROWS[kind].format(ndims=ndims, groups=groups)
    if interpreted():
        sizes = ("BLOCK=min(4096, triton.next_power_of_2(n_cols)), "
                 "ROWS=max(1, min(256, 32768 // min(4096, triton.next_power_of_2(n_cols))))")
    else:
        sizes = f"ROWS={tile('NORM_ROWS')}, BLOCK={tile('NORM_BLOCK')}"
    return _NORM.format(i=i, rows="    " + rows, eps=repr(float(eps)), rms="True" if rms else "False", sizes=sizes)
