"""Elementwise chains: y = f(x, ...) applied to every element, computed in fp32.

Design choices (parameters):
- `algo`: `flat` (one program per BLOCK contiguous elements), `persistent` (PROGRAMS programs
  stride over the tiles), `tile2d` (ROWS x COLS tiles of the (rows, cols) view; a column bias is
  loaded once per tile instead of gathered per element).
- `block`: elements per tile; `cols`: tile width of `tile2d` (rows = block / cols);
  `programs`: grid size of `persistent`.
- `warps`: num_warps; `mask`: `always` masks every access, `auto` drops the masks when the
  sizes divide the tile (decided at launch, a constexpr); `evict`: `none` or `first` (an
  eviction hint on the streamed loads).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.families.base import Family, Param, pow2

HEADER = """import torch
import torch.nn as nn
import triton
import triton.language as tl
"""


@dataclass(frozen=True)
class ElementwiseSpec:
    """One problem's chain. `inputs`: forward's tensor arguments (the first sets the output's
    shape and dtype); `bias`: a module parameter of shape (cols,) added per column, or None;
    `body`: lines computing `y` (fp32) from the fp32 values of the inputs (and `b`)."""

    problem_id: str
    inputs: tuple[str, ...]
    body: tuple[str, ...]
    bias: str | None = None
    doc: str = ""


def _check(d: dict[str, Any]) -> str | None:
    threads = 32 * d["warps"]
    algo = d["algo"]
    if algo != "tile2d" and d["cols"] != 0:
        return "cols applies to tile2d only"
    if algo == "tile2d" and (d["cols"] == 0 or d["cols"] > d["block"]):
        return "tile2d needs 0 < cols <= block"
    if algo != "persistent" and d["programs"] != 0:
        return "programs applies to persistent only"
    if algo == "persistent" and d["programs"] == 0:
        return "persistent needs a program count"
    if d["block"] < threads:
        return "fewer elements than threads"
    if d["block"] // threads > 64:
        return "more than 64 elements per thread"
    return None


def _loads(spec: ElementwiseSpec, evict: str, masked: bool, offs: str, mask: str) -> list[str]:
    hint = ', eviction_policy="evict_first"' if evict == "first" else ""
    m = f", mask={mask}, other=0.0" if masked else ""
    return [f"{v} = tl.load({v}_ptr + {offs}{m}{hint}).to(tl.float32)" for v in spec.inputs]


def _tile_code(spec: ElementwiseSpec, d: dict[str, Any], masked: bool, bias_load: str) -> list[str]:
    lines = _loads(spec, d["evict"], masked, "offs", "mask")
    if spec.bias:
        lines.append(bias_load)
    lines += list(spec.body)
    m = ", mask=mask" if masked else ""
    lines.append(f"tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty){m})")
    return lines


def _both(spec, d, bias_masked: str, bias_plain: str) -> list[str]:
    """The tile body, masked always, or under `if EVEN:` without masks."""
    if d["mask"] == "always":
        return _tile_code(spec, d, True, bias_masked)
    out = ["if EVEN:"] + ["    " + ln for ln in _tile_code(spec, d, False, bias_plain)]
    out += ["else:"] + ["    " + ln for ln in _tile_code(spec, d, True, bias_masked)]
    return out


def _render(spec: ElementwiseSpec, d: dict[str, Any]) -> str:
    ptrs = ", ".join(f"{v}_ptr" for v in spec.inputs) + (", b_ptr" if spec.bias else "")
    algo = d["algo"]
    if algo == "tile2d":
        sig = f"{ptrs}, y_ptr, n_rows, n_cols, ROWS: tl.constexpr, COLS: tl.constexpr, EVEN: tl.constexpr"
        pre = ["rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)",
               "cols = tl.program_id(1) * COLS + tl.arange(0, COLS)",
               "offs = rows[:, None] * n_cols + cols[None, :]",
               "mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)"]
        body = pre + _both(spec, d, "b = tl.load(b_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)[None, :]",
                           "b = tl.load(b_ptr + cols).to(tl.float32)[None, :]")
        rows = d["block"] // d["cols"]
        grid = f"(triton.cdiv(n_rows, {rows}), triton.cdiv(n_cols, {d['cols']}))"
        even = f"n_rows % {rows} == 0 and n_cols % {d['cols']} == 0"
        launch = f"n_rows, n_cols, ROWS={rows}, COLS={d['cols']}, EVEN={even}"
    else:
        sig = f"{ptrs}, y_ptr, n_elements, n_cols, BLOCK: tl.constexpr, EVEN: tl.constexpr"
        tile = ["offs = tile * BLOCK + tl.arange(0, BLOCK)", "mask = offs < n_elements"]
        gather = "b = tl.load(b_ptr + offs % n_cols{}).to(tl.float32)"
        inner = tile + _both(spec, d, gather.format(", mask=mask, other=0.0"), gather.format(""))
        if algo == "flat":
            body = ["tile = tl.program_id(0)"] + inner
            grid = f"(triton.cdiv(n_elements, {d['block']}),)"
        else:
            body = ["for tile in tl.range(tl.program_id(0), tl.cdiv(n_elements, BLOCK), tl.num_programs(0)):"]
            body += ["    " + ln for ln in inner]
            grid = f"(min({d['programs']}, triton.cdiv(n_elements, {d['block']})),)"
        launch = f"n_elements, n_cols, BLOCK={d['block']}, EVEN=n_elements % {d['block']} == 0"
    kernel = ["@triton.jit", f"def _ew_kernel({sig}):"] + ["    " + ln for ln in body]
    args = ", ".join(spec.inputs)
    conts = [f"        {v} = {v}.contiguous()" for v in spec.inputs]
    bias_arg = f"self.{spec.bias}, " if spec.bias else ""
    first = spec.inputs[0]
    init = ["        super().__init__()"]
    if spec.bias:
        init += ["        # Placeholder: the executor copies the reference's parameters in by name.",
                 f"        self.{spec.bias} = nn.Parameter(torch.zeros(1))"]
    model = ["class ModelNew(nn.Module):", "    def __init__(self):", *init, "",
             f"    def forward(self, {args}):", *conts,
             f"        y = torch.empty_like({first})",
             f"        n_elements = {first}.numel()",
             f"        n_cols = {first}.shape[-1] if {first}.dim() else 1",
             *(["        n_rows = n_elements // max(n_cols, 1)"] if algo == "tile2d" else []),
             "        if n_elements == 0:", "            return y",
             f"        _ew_kernel[{grid}]({args}, {bias_arg}y, {launch}, num_warps={d['warps']})",
             "        return y"]
    return HEADER + "\n\n" + "\n".join(kernel) + "\n\n\n" + "\n".join(model) + "\n"


def family(spec: ElementwiseSpec) -> Family:
    params = (
        Param("algo", ("flat", "persistent", "tile2d"), "grid shape"),
        Param("block", pow2(512, 16384), "elements per tile"),
        Param("cols", (0,) + pow2(64, 1024), "tile2d tile width"),
        Param("programs", (0, 132, 528, 2112), "persistent grid size"),
        Param("warps", pow2(1, 16), "num_warps"),
        Param("mask", ("always", "auto"), "masking"),
        Param("evict", ("none", "first"), "eviction hint on loads"),
    )
    return Family(name=f"elementwise:{spec.problem_id}", kind="elementwise", problem_id=spec.problem_id,
                  params=params, render_fn=lambda d: _render(spec, d), check_fn=_check,
                  doc=spec.doc or "Elementwise chain")


GELU_ERF = "0.5 * {v} * (1.0 + tl.math.erf({v} * 0.7071067811865476))"

SPECS = (
    ElementwiseSpec("L1/02_relu", ("x",), ("y = tl.maximum(x, 0.0)",), doc="ReLU"),
    ElementwiseSpec("L1/03_gelu", ("x",), ("y = " + GELU_ERF.format(v="x"),), doc="GELU (erf)"),
    ElementwiseSpec("L1/04_silu_bf16", ("x",), ("y = x / (1.0 + tl.exp(-x))",), doc="SiLU, bf16 in and out"),
    ElementwiseSpec("L2/11_bias_gelu_mul", ("x", "g"), ("h = x + b", "y = " + GELU_ERF.format(v="h") + " * g"),
                    bias="bias", doc="gelu(x + bias) * g"),
)
