"""Layer norm and RMS norm over the last dimension, with an optional residual add or GELU
prologue (h = x + r, or h = gelu(x), normalised).

Design choices: `algo` (`onepass`: whole rows in registers; `loop`: streamed, statistics from
one pass of sum and sum of squares, then a normalising pass; `loop_centered`, layer norm only:
a mean pass, a centred-variance pass, a normalising pass), `block`, `rows`, `warps`, `stages`
(as in rows.py) and, for a problem with a residual or prologue, `resid`: the streamed first
pass writes h to an fp32 buffer that later passes read (`store`) or every pass recomputes h
from the inputs (`recompute`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.families.base import Family, Param, pow2
from workbench.families.rows import ROW_IDX, _chunk, _ind, _launch_block, _loop, _model, _row_checks

GELU = "0.5 * {v} * (1.0 + tl.math.erf({v} * 0.7071067811865476))"


@dataclass(frozen=True)
class NormSpec:
    problem_id: str
    kind: str  # "layer" | "rms"
    full_cols: int
    weight: str  # module attribute path of the weight, e.g. "ln.weight"
    bias: str | None = None
    eps: float = 1e-5
    residual: bool = False
    prologue: str | None = None  # "gelu"
    round_before_weight: bool = False  # (h * rstd) rounded to the output dtype before * weight
    doc: str = ""

    @property
    def fused_input(self) -> bool:
        return self.residual or self.prologue is not None


def _h(spec: NormSpec, from_buffer: bool) -> list[str]:
    if from_buffer:
        return ["h = tl.load(h_ptr + offs, mask=m, other=0.0)"]
    if spec.residual:
        # The sum is rounded to the input dtype first, as the reference's (x + r).float() is.
        return ["h = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float32) + "
                "tl.load(r_ptr + offs, mask=m, other=0.0).to(tl.float32)",
                "h = h.to(x_ptr.dtype.element_ty).to(tl.float32)"]
    lines = ["h = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float32)"]
    if spec.prologue == "gelu":
        lines.append("h = " + GELU.format(v="h"))
    return lines


def _normalise(spec: NormSpec) -> list[str]:
    lines = ["w = tl.load(w_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)[None, :]"]
    if spec.kind == "layer":
        lines.append("y = (h - mean[:, None]) * rstd[:, None]")
    else:
        lines.append("y = h * rstd[:, None]")
    if spec.round_before_weight:
        lines.append("y = y.to(y_ptr.dtype.element_ty).to(tl.float32)")
    lines.append("y = y * w")
    if spec.bias:
        lines.append("y = y + tl.load(b_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)[None, :]")
    lines.append("tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=m)")
    return lines


def _stats_from_sums(spec: NormSpec) -> list[str]:
    if spec.kind == "layer":
        return ["mean = tl.sum(s1, axis=1) / n_cols", "var = tl.maximum(tl.sum(s2, axis=1) / n_cols - mean * mean, 0.0)",
                "rstd = 1.0 / tl.sqrt(var + EPS)"]
    return ["rstd = 1.0 / tl.sqrt(tl.sum(s2, axis=1) / n_cols + EPS)"]


def _render(spec: NormSpec, d: dict[str, Any]) -> str:
    algo, st = d["algo"], d["stages"]
    store = d["resid"] == "store"
    body = list(ROW_IDX)
    if algo == "onepass":
        body += _chunk("0") + _h(spec, False) + ["h = tl.where(m, h, 0.0)"]
        if spec.kind == "layer":
            body += ["mean = tl.sum(h, axis=1) / n_cols", "c = tl.where(m, h - mean[:, None], 0.0)",
                     "rstd = 1.0 / tl.sqrt(tl.sum(c * c, axis=1) / n_cols + EPS)"]
        else:
            body += ["rstd = 1.0 / tl.sqrt(tl.sum(h * h, axis=1) / n_cols + EPS)"]
        body += _normalise(spec)
    else:
        first = _chunk() + _h(spec, False) + (["tl.store(h_ptr + offs, h, mask=m)"] if store else [])
        if algo == "loop":
            body += ["s1 = tl.zeros((ROWS, BLOCK), tl.float32)", "s2 = tl.zeros((ROWS, BLOCK), tl.float32)", _loop(st)]
            body += _ind(first + ["s1 += h", "s2 += h * h"])
            body += _stats_from_sums(spec)
        else:  # loop_centered
            body += ["s1 = tl.zeros((ROWS, BLOCK), tl.float32)", _loop(st)]
            body += _ind(first + ["s1 += h"])
            body += ["mean = tl.sum(s1, axis=1) / n_cols", "s2 = tl.zeros((ROWS, BLOCK), tl.float32)", _loop(st)]
            body += _ind(_chunk() + _h(spec, store) + ["c = tl.where(m, h - mean[:, None], 0.0)", "s2 += c * c"])
            body += ["rstd = 1.0 / tl.sqrt(tl.sum(s2, axis=1) / n_cols + EPS)"]
        body += [_loop(st)] + _ind(_chunk() + _h(spec, store) + _normalise(spec))
    ptrs = "x_ptr, " + ("r_ptr, " if spec.residual else "") + ("h_ptr, " if store else "") + "w_ptr, " + \
        ("b_ptr, " if spec.bias else "")
    kernel = ["@triton.jit",
              f"def _norm_rows({ptrs}y_ptr, n_rows, n_cols, EPS: tl.constexpr, ROWS: tl.constexpr, BLOCK: tl.constexpr):"]
    kernel += _ind(body)
    args = "x, r" if spec.residual else "x"
    conts = ["        n_cols = x.shape[-1]", "        x2 = x.contiguous().view(-1, n_cols)"]
    if spec.residual:
        conts.append("        r2 = r.contiguous().view(-1, n_cols)")
    call = "x2, " + ("r2, " if spec.residual else "") + ("hbuf, " if store else "") + f"self.{spec.weight}, " + \
        (f"self.{spec.bias}, " if spec.bias else "")
    fwd = [f"    def forward(self, {args}):", *conts, "        n_rows = x2.shape[0]", "        y = torch.empty_like(x2)",
           "        if n_rows == 0 or n_cols == 0:", "            return y.view(x.shape)"]
    if store:
        fwd.append("        hbuf = torch.empty(x2.shape, dtype=torch.float32, device=x.device)")
    fwd += [f"        _norm_rows[(triton.cdiv(n_rows, {d['rows']}),)]({call}y, n_rows, n_cols, EPS={spec.eps!r}, "
            f"ROWS={d['rows']}, BLOCK={_launch_block(d)}, num_warps={d['warps']})", "        return y.view(x.shape)"]
    attrs = tuple(a for a in (spec.weight, spec.bias) if a)
    return _model(kernel, fwd, attrs)


def norm_family(spec: NormSpec) -> Family:
    def check(d):
        if d["algo"] == "loop_centered" and spec.kind != "layer":
            return "an RMS norm has no mean to centre on"
        if d["resid"] == "store" and (not spec.fused_input or d["algo"] == "onepass"):
            return "storing h applies to a streamed norm with a residual or prologue"
        return _row_checks(d, spec.full_cols, ("loop", "loop_centered"))

    params = (Param("algo", ("onepass", "loop", "loop_centered")), Param("block", (0,) + pow2(128, 4096)),
              Param("rows", (1, 2, 4)), Param("warps", pow2(1, 16)), Param("stages", (0, 1, 2, 3)),
              Param("resid", ("recompute", "store")))
    return Family(name=f"norm:{spec.problem_id}", kind=f"{spec.kind}_norm", problem_id=spec.problem_id, params=params,
                  render_fn=lambda d: _render(spec, d), check_fn=check,
                  doc=spec.doc or ("Layer norm" if spec.kind == "layer" else "RMS norm"))
