"""The Triton library embedded in generic seeds (`generic.py`): one kernel per op family, every
size, dim and flag read at run time, so a seed written with it runs at any size.

`SOURCE` is the library's text (a `string.Template`: `$name` tile sizes) and `render(profile)`
fills it for a GPU or for Triton's interpreter (the CPU path, where a program's cost is mostly
Python overhead and a few large tiles run far faster than many small ones). Tests render it and
check every entry against PyTorch.

Entry points (all arithmetic in fp32, results in the op's dtype; each raises `_Unsupported`
for an argument it does not handle, so a seed fails loudly instead of falling back to PyTorch):
  _t_unary(op, x, p0, p1)       relu, gelu, sigmoid, ... (`UNARY`), p0 / p1 its parameters
  _t_binary(op, a, b)           add, sub, mul, div, pow, maximum, minimum, comparisons; tensors of
                                broadcastable shapes (up to 6 dims) or a tensor and a number
  _t_where(c, a, b)             torch.where / masked_fill
  _t_reduce(op, x, dim, keepdim)  sum, mean, amax, amin, prod, norm2, norm1, norminf, argmax,
                                argmin, max_dim, min_dim over any dims
  _t_softmax(x, dim, log)       softmax / log-softmax over any dim
  _t_scan(x, dim, prod)         cumsum / cumprod over any dim
  _t_matmul(a, b) / _t_linear(x, w, b)   2-D, batched, broadcast, matrix-vector
  _t_conv(x, w, b, stride, padding, dilation, groups, transposed, output_padding)
  _t_pool(x, d, kernel, stride, padding, dilation, ceil_mode, is_max, count_pad, divisor, adaptive)
  _t_norm(kind, x, w, b, eps, ndims, groups)   layer / rms / group / instance
  _t_batchnorm(x, mean, var, w, b, eps)
  _t_rows(kind, a, b, c, t, p1, p2)   per-row cross entropy, cosine similarity, distances, triplet
  _t_sum(x, denom)              sum of all elements / denom
  _t_rnn(mode, x, hx, weights, layers, dirs, batch_first, hidden)   RNN / LSTM / GRU, and cells
"""
from __future__ import annotations

import string

from workbench.seeds.tlib_core import CORE
from workbench.seeds.tlib_dispatch import DISPATCH
from workbench.seeds.tlib_nn import NN

_NP2 = "triton.next_power_of_2"
#: Launch sizes: literals on a GPU (the search's mutation operators tune them); in the interpreter
#: expressions of the sizes, so a small dimension does not pay for a large masked tile.
TILES = {
    "gpu": {"EW": "1024", "BM": "64", "BN": "64", "BK": "32", "ROWS": "4", "RBLOCK": "1024", "CR": "64",
            "CI": "16", "NROWS": "1", "NBLOCK": "1024", "CONV_BM": "64", "CONV_BN": "64", "CONV_BK": "32",
            "POOL": "256", "RNN_B": "16", "RNN_H": "64", "RNN_K": "32", "SUMB": "1024"},
    "interpreter": {
        "EW": "262144", "BM": f"min(256, max(16, {_NP2}(M)))", "BN": f"min(256, max(16, {_NP2}(N)))",
        "BK": f"min(256, max(16, {_NP2}(K)))", "RBLOCK": f"min(16384, {_NP2}(R))",
        "ROWS": f"max(1, min(1024, 262144 // min(16384, {_NP2}(R))))", "CR": f"min(1024, {_NP2}(R))",
        "CI": f"min(256, {_NP2}(inner))", "NBLOCK": f"min(16384, {_NP2}(n_cols))",
        "NROWS": f"max(1, min(1024, 262144 // min(16384, {_NP2}(n_cols))))",
        "CONV_BM": f"min(4096, max(16, {_NP2}(M)))", "CONV_BN": f"min(128, max(16, {_NP2}(OCG)))",
        "CONV_BK": f"min(256, max(16, {_NP2}(KTOT)))", "POOL": "262144", "RNN_B": "128", "RNN_H": "256",
        "RNN_K": f"min(256, max(16, {_NP2}(H)))", "SUMB": "262144"},
}

UNARY = ("relu", "relu6", "leaky_relu", "elu", "celu", "selu", "gelu", "gelu_tanh", "silu", "mish", "sigmoid",
         "logsigmoid", "tanh", "hardtanh", "hardsigmoid", "hardswish", "softplus", "softsign", "tanhshrink", "exp",
         "log", "log2", "log1p", "expm1", "abs", "neg", "sqrt", "rsqrt", "reciprocal", "square", "sin", "cos",
         "erf", "floor", "ceil", "sign", "clamp", "clamp_min", "clamp_max", "logical_not", "identity", "powc")
BINARY = ("add", "sub", "mul", "div", "pow", "maximum", "minimum", "gt", "lt", "ge", "le", "eq", "ne",
          "logical_and", "logical_or", "rsub", "xlogy", "smooth_l1", "huber", "kl", "bce", "sqdiff", "absdiff")


def render(profile: str = "gpu") -> str:
    """The library's source for `profile` ("gpu" or "interpreter")."""
    return string.Template(SOURCE).substitute(TILES[profile])


#: The library's text: kernels and their launchers (`tlib_core`, `tlib_nn`).
SOURCE = CORE + NN



def render_all(profile: str = "gpu") -> str:
    """The kernels and the dispatch layer for `profile`."""
    return render(profile) + DISPATCH
