"""Row-wise families over a (rows, cols) view: row reductions, softmax, layer/RMS norm.

Every kernel works on a [ROWS, BLOCK] tile (ROWS rows per program). Shared design choices:
- `algo`: `onepass` holds whole rows in registers (BLOCK = the next power of two of the row
  length, set at launch); the looped algorithms stream a row in BLOCK-wide chunks: a reduction
  accumulates a [ROWS, BLOCK] vector (`loop_vec`) or reduces every chunk (`loop_scalar`) or
  splits each row over SPLIT programs and combines the partials in a second kernel (`split`);
  softmax keeps an online max/sum (`online`, two passes over the row) or takes three passes
  (`threepass`: max, sum, write); a norm takes its statistics in one streamed pass (`loop`:
  sum and sum of squares) or two (`loop_centered`: mean, then centred variance).
- `block` (0 for onepass), `rows`, `warps`, `stages` (software pipelining of the streamed
  loops, 0 for onepass), plus per-kind choices: the accumulator precision of a sum (`acc`),
  exp or exp2 (`exp`), and for a norm with a residual or prologue whether the first pass
  stores h (`resid=store`) or every pass recomputes it (`recompute`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.families.base import MAX_VALUES_PER_THREAD, Family, Param, pow2

HEADER = """import torch
import torch.nn as nn
import triton
import triton.language as tl
"""
LOG2E = "1.4426950408889634"
NEG = '-float("inf")'
ROW_IDX = ["rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)", "rmask = rows < n_rows"]


def _chunk(var: str = "c0") -> list[str]:
    return [f"cols = {var} + tl.arange(0, BLOCK)", "m = rmask[:, None] & (cols[None, :] < n_cols)",
            "offs = rows[:, None] * n_cols + cols[None, :]"]


def _loop(stages: int) -> str:
    return f"for c0 in tl.range(0, n_cols, BLOCK, num_stages={stages}):"


def _ind(lines: list[str], n: int = 1) -> list[str]:
    return ["    " * n + ln for ln in lines]


def _row_checks(d: dict[str, Any], full_cols: int, loops: tuple[str, ...]) -> str | None:
    threads = 32 * d["warps"]
    if d["algo"] == "onepass":
        if d["block"] != 0 or d["stages"] != 0:
            return "onepass takes whole rows: block and stages are 0"
        width = 1 << max(full_cols - 1, 0).bit_length()
        if d["rows"] * width > MAX_VALUES_PER_THREAD * threads:
            return "a row tile of the full-size problem would not fit in registers"
        return None
    if d["algo"] not in loops:
        return f"unknown algorithm {d['algo']}"
    if d["block"] == 0 or d["stages"] == 0:
        return "a streamed loop needs a block and a stage count"
    if d["block"] > full_cols:
        return "the chunk is wider than the full-size row"
    if d["rows"] * d["block"] < threads:
        return "fewer tile elements than threads"
    if d["rows"] * d["block"] > 64 * threads:
        return "more than 64 tile elements per thread"
    return None


def _model(kernel: list[str], forward: list[str], attrs: tuple[str, ...] = ()) -> str:
    init = ["        super().__init__()"]
    if attrs:
        init.append("        # Placeholders: the executor copies the reference's parameters in by name.")
    for a in attrs:
        if "." in a:
            mod = a.split(".")[0]
            line = f"        self.{mod} = nn.LayerNorm(1)"
        else:
            line = f"        self.{a} = nn.Parameter(torch.zeros(1))"
        if line not in init:
            init.append(line)
    model = ["class ModelNew(nn.Module):", "    def __init__(self):", *init, "", *forward]
    return HEADER + "\n\n" + "\n".join(kernel) + "\n\n\n" + "\n".join(model) + "\n"


def _launch_block(d: dict[str, Any]) -> str:
    return "triton.next_power_of_2(n_cols)" if d["algo"] == "onepass" else str(d["block"])


# =========================================================================== reductions
@dataclass(frozen=True)
class ReduceSpec:
    problem_id: str
    op: str  # "sum" | "max"
    full_cols: int
    doc: str = ""


def _reduce_render(spec: ReduceSpec, d: dict[str, Any]) -> str:
    is_max = spec.op == "max"
    acc_t = "tl.float64" if d["acc"] == "fp64" else "tl.float32"
    other = '-float("inf")' if is_max else "0.0"
    comb = "tl.maximum({a}, {b})" if is_max else "{a} + {b}"
    red = "tl.max" if is_max else "tl.sum"
    init_vec = (f'tl.full((ROWS, BLOCK), -float("inf"), {acc_t})' if is_max else f"tl.zeros((ROWS, BLOCK), {acc_t})")
    init_row = (f'tl.full((ROWS,), -float("inf"), {acc_t})' if is_max else f"tl.zeros((ROWS,), {acc_t})")
    load = f"x = tl.load(x_ptr + offs, mask=m, other={other}).to({acc_t})"
    algo = d["algo"]
    kernels: list[str] = []
    if algo in ("onepass", "loop_vec", "loop_scalar"):
        body = list(ROW_IDX)
        if algo == "onepass":
            body += _chunk("0") + [load, f"r = {red}(x, axis=1)"]
        elif algo == "loop_vec":
            body += [f"acc = {init_vec}", _loop(d["stages"])] + _ind(_chunk() + [load, "acc = " + comb.format(a="acc", b="x")])
            body += [f"r = {red}(acc, axis=1)"]
        else:
            body += [f"acc = {init_row}", _loop(d["stages"])]
            body += _ind(_chunk() + [load, "acc = " + comb.format(a="acc", b=f"{red}(x, axis=1)")])
            body += ["r = acc"]
        body += ["tl.store(y_ptr + rows, r.to(y_ptr.dtype.element_ty), mask=rmask)"]
        kernels = ["@triton.jit", "def _reduce_rows(x_ptr, y_ptr, n_rows, n_cols, ROWS: tl.constexpr, BLOCK: tl.constexpr):"]
        kernels += _ind(body)
        launch = [f"        _reduce_rows[(triton.cdiv(n_rows, {d['rows']}),)](x, y, n_rows, n_cols, ROWS={d['rows']}, "
                  f"BLOCK={_launch_block(d)}, num_warps={d['warps']})"]
        alloc = []
    else:  # split
        body = list(ROW_IDX) + ["s = tl.program_id(1)", "start = s * span", f"acc = {init_vec}",
                                f"for c0 in tl.range(start, start + span, BLOCK, num_stages={d['stages']}):"]
        body += _ind(["cols = c0 + tl.arange(0, BLOCK)",
                      "m = rmask[:, None] & (cols[None, :] < n_cols) & (cols[None, :] < start + span)",
                      "offs = rows[:, None] * n_cols + cols[None, :]", load,
                      "acc = " + comb.format(a="acc", b="x")])
        body += [f"tl.store(p_ptr + rows * SPLIT + s, {red}(acc, axis=1), mask=rmask)"]
        kernels = ["@triton.jit",
                   "def _reduce_part(x_ptr, p_ptr, n_rows, n_cols, span, SPLIT: tl.constexpr, ROWS: tl.constexpr, BLOCK: tl.constexpr):"]
        kernels += _ind(body) + ["", "", "@triton.jit",
                                 "def _reduce_final(p_ptr, y_ptr, n_rows, SPLIT: tl.constexpr, ROWS: tl.constexpr):"]
        kernels += _ind(list(ROW_IDX) + ["k = tl.arange(0, SPLIT)",
                                         f"p = tl.load(p_ptr + rows[:, None] * SPLIT + k[None, :], mask=rmask[:, None], other={other})",
                                         f"tl.store(y_ptr + rows, {red}(p, axis=1).to(y_ptr.dtype.element_ty), mask=rmask)"])
        tdt = "torch.float64" if d["acc"] == "fp64" else "torch.float32"
        sp = d["split"]
        alloc = [f"        span = triton.cdiv(triton.cdiv(n_cols, {sp}), {d['block']}) * {d['block']}",
                 f"        p = torch.empty((n_rows, {sp}), dtype={tdt}, device=x.device)"]
        launch = [f"        _reduce_part[(triton.cdiv(n_rows, {d['rows']}), {sp})](x, p, n_rows, n_cols, span, SPLIT={sp}, "
                  f"ROWS={d['rows']}, BLOCK={d['block']}, num_warps={d['warps']})",
                  f"        _reduce_final[(triton.cdiv(n_rows, 64),)](p, y, n_rows, SPLIT={sp}, ROWS=64, num_warps=2)"]
    fwd = ["    def forward(self, x):", "        n_cols = x.shape[-1]", "        x2 = x.contiguous().view(-1, n_cols)",
           "        n_rows = x2.shape[0]", "        y = torch.empty(x.shape[:-1], dtype=x.dtype, device=x.device)",
           "        if n_rows == 0 or n_cols == 0:", "            return y", "        x = x2", *alloc, *launch, "        return y"]
    return _model(kernels, fwd)


def reduce_family(spec: ReduceSpec) -> Family:
    def check(d):
        if spec.op == "max" and d["acc"] != "fp32":
            return "a max needs no wider accumulator"
        if (d["algo"] == "split") != (d["split"] > 1):
            return "split applies to the split algorithm only"
        if d["algo"] == "split" and d["rows"] > 2:
            return "split programs take one or two rows"
        return _row_checks(d, spec.full_cols, ("loop_vec", "loop_scalar", "split"))

    params = (Param("algo", ("onepass", "loop_vec", "loop_scalar", "split")), Param("block", (0,) + pow2(256, 8192)),
              Param("rows", (1, 2, 4, 8)), Param("warps", pow2(1, 16)), Param("stages", (0, 1, 3)),
              Param("split", (1, 2, 4, 8)), Param("acc", ("fp32", "fp64")))
    return Family(name=f"reduce:{spec.problem_id}", kind="row_reduce", problem_id=spec.problem_id, params=params,
                  render_fn=lambda d: _reduce_render(spec, d), check_fn=check, doc=spec.doc or f"Row {spec.op}")


# =========================================================================== softmax
@dataclass(frozen=True)
class SoftmaxSpec:
    problem_id: str
    full_cols: int
    log: bool = False
    scale: float = 1.0
    causal: bool = False  # row r of each (seq, seq) slab keeps columns <= r % seq
    doc: str = ""


def _softmax_render(spec: SoftmaxSpec, d: dict[str, Any]) -> str:
    def ex(z: str) -> str:
        return f"tl.exp2(({z}) * {LOG2E})" if d["exp"] == "exp2" else f"tl.exp({z})"

    scale = f" * {spec.scale!r}" if spec.scale != 1.0 else ""
    load = [f"x = tl.load(x_ptr + offs, mask=m, other={NEG}).to(tl.float32){scale}"]
    if spec.causal:
        load += [f"x = tl.where(cols[None, :] <= (rows % n_cols)[:, None], x, {NEG})"]
    if spec.log:
        out = "y = x - mx[:, None] - tl.log(tot)[:, None]"
    else:
        out = f"y = {ex('x - mx[:, None]')} / tot[:, None]"
    store = [out, "tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=m)"]
    body = list(ROW_IDX)
    algo, st = d["algo"], d["stages"]
    if algo == "onepass":
        body += _chunk("0") + load + ["mx = tl.max(x, axis=1)",
                                      f"tot = tl.sum(tl.where(m, {ex('x - mx[:, None]')}, 0.0), axis=1)"] + store
    elif algo == "online":
        body += [f"mi = tl.full((ROWS, BLOCK), {NEG}, tl.float32)", "si = tl.zeros((ROWS, BLOCK), tl.float32)",
                 _loop(st)]
        alpha = ex(f"tl.where(mn == {NEG}, 0.0, mi - mn)")
        body += _ind(_chunk() + load + [
            "mn = tl.maximum(mi, x)",
            f"si = si * {alpha} + tl.where(mn == {NEG}, 0.0, {ex('x - mn')})",
            "mi = mn"])
        rescale = ex(f"tl.where(mi == {NEG}, {NEG}, mi - mx[:, None])")
        body += ["mx = tl.max(mi, axis=1)", f"tot = tl.sum(si * {rescale}, axis=1)",
                 _loop(st)] + _ind(_chunk() + load + store)
    else:  # threepass
        body += [f"mv = tl.full((ROWS, BLOCK), {NEG}, tl.float32)", _loop(st)]
        body += _ind(_chunk() + load + ["mv = tl.maximum(mv, x)"])
        body += ["mx = tl.max(mv, axis=1)", "sv = tl.zeros((ROWS, BLOCK), tl.float32)", _loop(st)]
        body += _ind(_chunk() + load + [f"sv += tl.where(x == {NEG}, 0.0, {ex('x - mx[:, None]')})"])
        body += ["tot = tl.sum(sv, axis=1)", _loop(st)] + _ind(_chunk() + load + store)
    kernel = ["@triton.jit", "def _softmax_rows(x_ptr, y_ptr, n_rows, n_cols, ROWS: tl.constexpr, BLOCK: tl.constexpr):"]
    kernel += _ind(body)
    fwd = ["    def forward(self, x):", "        n_cols = x.shape[-1]", "        x2 = x.contiguous().view(-1, n_cols)",
           "        n_rows = x2.shape[0]", "        y = torch.empty_like(x2)", "        if n_rows == 0 or n_cols == 0:",
           "            return y.view(x.shape)",
           f"        _softmax_rows[(triton.cdiv(n_rows, {d['rows']}),)](x2, y, n_rows, n_cols, ROWS={d['rows']}, "
           f"BLOCK={_launch_block(d)}, num_warps={d['warps']})", "        return y.view(x.shape)"]
    return _model(kernel, fwd)


def softmax_family(spec: SoftmaxSpec) -> Family:
    def check(d):
        return _row_checks(d, spec.full_cols, ("online", "threepass"))

    params = (Param("algo", ("onepass", "online", "threepass")), Param("block", (0,) + pow2(256, 8192)),
              Param("rows", (1, 2, 4)), Param("warps", pow2(1, 16)), Param("stages", (0, 1, 3)),
              Param("exp", ("exp", "exp2")))
    return Family(name=f"softmax:{spec.problem_id}", kind="softmax", problem_id=spec.problem_id, params=params,
                  render_fn=lambda d: _softmax_render(spec, d), check_fn=check,
                  doc=spec.doc or ("Log-softmax" if spec.log else "Softmax"))
