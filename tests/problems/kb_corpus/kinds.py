"""The kinds of KernelBench problem this corpus covers, each a predicate over a reference's
traced forward, and CORPUS.md's table of the files that show each kind.

`trace` runs a problem's reference on the meta device (shapes and dtypes, no compute, so any
size) and records every ATen kernel it launches (count, bytes read and written, FLOPs of
products, convolutions and attention) and every torch call its forward makes (name, arguments,
result; outermost calls only). A kind is a predicate over that trace, the file's source and its
level. tests/problems/test_kb_corpus.py checks CORPUS.md against these predicates; after adding
or changing a corpus file, regenerate the table from the repository root:

    PYTHONPATH=. python tests/problems/kb_corpus/kinds.py
"""
from __future__ import annotations

import ast
import functools
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten
from torch.utils.flop_counter import flop_registry

from workbench.problems import load_source
from workbench.problems.ops import classify_op

CORPUS = Path(__file__).parent


def corpus_files(root: Path = CORPUS) -> list[Path]:
    """The problem files under `root`, by level and number."""
    return sorted(root.glob("level*/*.py"), key=lambda p: (p.parent.name, int(p.stem.split("_")[0])))


def level_of(path: Path) -> int:
    return int(path.parent.name[len("level"):])


def problem_id(path: Path) -> str:
    """The id the KernelBench loader gives the file: `L{level}/{stem}`."""
    return f"L{level_of(path)}/{path.stem}"


# ---------------------------------------------------------------- tracing


@dataclass
class Trace:
    """One forward of a reference on the meta device."""

    model: Any
    init_inputs: list
    inputs: list
    outs: list
    launches: int = 0        # ATen ops that launch a kernel
    op_bytes: int = 0        # bytes every such op reads and writes
    out_bytes: int = 0       # bytes every such op writes
    flops: float = 0.0       # FLOPs of the products, convolutions and attention
    calls: list = field(default_factory=list)  # (name, args, kwargs, result) of torch calls

    @property
    def held_bytes(self) -> int:
        """Inputs, parameters and buffers: what the problem holds before it runs."""
        return nbytes(self.inputs + list(self.model.parameters()) + list(self.model.buffers()))


def nbytes(tensors) -> int:
    seen, total = set(), 0
    for t in tensors:
        if isinstance(t, torch.Tensor) and id(t) not in seen:
            seen.add(id(t))
            total += t.numel() * t.element_size()
    return total


class _Kernels(TorchDispatchMode):
    def __init__(self, trace: Trace) -> None:
        super().__init__()
        self.trace = trace

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if classify_op(func.overloadpacket.__name__) is not None:
            t = self.trace
            ins = nbytes(tree_flatten((args, kwargs))[0])
            outs = nbytes(tree_flatten(out)[0])
            t.launches += 1
            t.op_bytes += ins + outs
            t.out_bytes += outs
            if func.overloadpacket in flop_registry:
                t.flops += float(flop_registry[func.overloadpacket](*args, **kwargs, out_val=out))
        return out


#: Torch calls not worth recording (shape queries, property reads).
_QUIET = {"get", "dim", "size", "numel", "stride", "is_contiguous", "setitem"}


class _Calls(TorchFunctionMode):
    """Records the torch functions and tensor methods the reference calls (outermost only)."""

    def __init__(self, trace: Trace) -> None:
        super().__init__()
        self.trace = trace

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = getattr(func, "__name__", "").strip("_")
        if name not in _QUIET:
            self.trace.calls.append((name, args, kwargs, out))
        return out


def trace(source: str, name: str, calls: bool = False) -> Trace:
    """The reference of `source` built and run on the meta device."""
    module = load_source(source, name=name).module
    with torch.device("meta"):
        init_inputs = module.get_init_inputs()
        model = module.Model(*init_inputs)
        inputs = module.get_inputs()
    inputs = [x.to("meta") if isinstance(x, torch.Tensor) else x for x in inputs]
    model = model.to("meta")
    trace = Trace(model=model, init_inputs=init_inputs, inputs=inputs, outs=[])
    with torch.no_grad(), _Kernels(trace):
        if calls:
            with _Calls(trace):
                out = model(*inputs)
        else:
            out = model(*inputs)
    trace.outs = [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor)]
    return trace



# ---------------------------------------------------------------- kinds
# Each kind is a predicate over a file's full-size trace (its torch calls and their tensors),
# its source and its level. Tensors in `Trace.calls` stay referenced, so `id()` identifies them.

_T = torch.Tensor
_ACTIVATIONS = {"relu", "leaky_relu", "sigmoid", "tanh", "gelu", "selu", "hardsigmoid", "hardtanh",
                "softplus", "elu", "silu", "relu6"}
_NORMS = {"batch_norm", "instance_norm", "group_norm", "layer_norm"}
_POOLS = {f"{k}_pool{d}d" for k in ("max", "avg", "adaptive_avg", "adaptive_max") for d in (1, 2, 3)}
_REDUCTIONS = {"sum", "mean", "max", "min", "prod", "amax", "amin", "argmax", "argmin", "logsumexp"}


def _calls(t: Trace, *names: str) -> list[tuple]:
    return [(a, k, r) for n, a, k, r in t.calls if n in names]


def _arg(args, kwargs, i: int, key: str, default=None):
    return kwargs[key] if key in kwargs else (args[i] if len(args) > i else default)


def _made_by(t: Trace, *names: str) -> set[int]:
    return {id(r) for n, _, _, r in t.calls if n in names and isinstance(r, _T)}


def _consumes(t: Trace, name: str, producers: set[int]) -> bool:
    """Some `name` call takes a tensor that one of `producers` returned as its first input."""
    return any(a and id(a[0]) in producers for a, _, _ in _calls(t, name))


def _reduces(t: Trace, *names: str) -> bool:
    return any(_arg(a, k, 1, "dim") is not None for a, k, _ in _calls(t, *names))


@dataclass
class _Product:
    """A matrix product as (..., M, K) @ (..., K, N); a linear layer is x @ W^T."""

    a: _T
    b_shape: tuple          # (..., K, N), or (K,) for a vector
    a_transposed: bool      # an operand passed as a transposed view (`A.T`)
    b_transposed: bool
    out: Any

    @property
    def mkn(self) -> tuple[int, int, int]:
        m = self.a.shape[-2] if self.a.dim() >= 2 else 1
        return m, self.a.shape[-1], (self.b_shape[-1] if len(self.b_shape) >= 2 else 1)


def _transposed(x) -> bool:
    return isinstance(x, _T) and x.dim() >= 2 and x.stride(-2) == 1 and x.stride(-1) != 1


def _products(t: Trace) -> list[_Product]:
    out = []
    for name, args, kwargs, res in t.calls:
        ops = [x for x in tree_flatten(list(args))[0] if isinstance(x, _T)]
        if name in ("matmul", "mm", "bmm", "mv", "einsum") and len(ops) == 2:
            out.append(_Product(ops[0], tuple(ops[1].shape), _transposed(ops[0]),
                                _transposed(ops[1]), res))
        elif name == "linear":
            w = _arg(args, kwargs, 1, "weight")
            out.append(_Product(args[0], (w.shape[1], w.shape[0]), False, False, res))
    return out


def _convs(t: Trace) -> list[dict]:
    out = []
    for name, args, kwargs, _ in t.calls:
        m = re.fullmatch(r"conv(_transpose)?([123])d", name)
        if m:
            tr = bool(m.group(1))
            pick = (lambda i, d: _arg(args, kwargs, i, d, 1))
            as_tuple = (lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v,))
            out.append(dict(dims=int(m.group(2)), transposed=tr, x=args[0], w=args[1],
                            stride=as_tuple(pick(3, "stride")),
                            dilation=as_tuple(pick(7 if tr else 5, "dilation")),
                            groups=pick(6, "groups")))
    return out


def _depthwise(c: dict) -> bool:
    return (not c["transposed"] and c["groups"] > 1 and c["groups"] == c["x"].shape[1]
            and c["w"].shape[1] == 1)


def _softmax_dims(t: Trace, name: str) -> list[tuple[int, int]]:
    """(dim as written, rank) of each softmax-like call."""
    return [(_arg(a, k, 1, "dim"), a[0].dim()) for a, k, _ in _calls(t, name)]


def _middle(dim: int, rank: int) -> bool:
    return rank >= 3 and 0 < dim % rank < rank - 1


def _residual(t: Trace) -> bool:
    params = {id(p) for p in t.model.parameters()}
    for a, _, _ in _calls(t, "add", "iadd", "add_"):
        ts = [x for x in a[:2] if isinstance(x, _T)]
        if len(ts) == 2 and ts[0] is not ts[1] and ts[0].shape == ts[1].shape \
                and not {id(x) for x in ts} & params:
            return True
    return False


def _rms(t: Trace) -> bool:
    return _consumes(t, "mean", _made_by(t, "pow")) and bool(_calls(t, "sqrt", "rsqrt"))


def _lp(t: Trace, p) -> bool:
    return any(_arg(a, k, 1, "p") == p for a, k, _ in _calls(t, "norm"))


def _l1(t: Trace) -> bool:
    return _consumes(t, "sum", _made_by(t, "abs")) and bool(_calls(t, "div"))


def _written_norm(t: Trace) -> bool:
    return _rms(t) or _l1(t) or _lp(t, 2) or _lp(t, "fro")


def _cumsum_inputs(t: Trace) -> list[_T]:
    return [a[0] for a, _, _ in _calls(t, "cumsum")]


def _exclusive(t: Trace) -> bool:
    if _consumes(t, "cumsum", _made_by(t, "cat")):
        return True
    sums = {id(r): id(a[0]) for a, _, r in _calls(t, "cumsum")}
    return any(len(a) == 2 and id(a[0]) in sums and sums[id(a[0])] == id(a[1])
               for a, _, _ in _calls(t, "sub"))


def _masked_cumsum(t: Trace) -> bool:
    from_bool = {id(r) for a, _, r in _calls(t, "to", "float") if a[0].dtype == torch.bool}
    masked = {id(r) for a, _, r in _calls(t, "mul")
              if any(isinstance(x, _T) and (x.dtype == torch.bool or id(x) in from_bool) for x in a)}
    return any(id(x) in masked for x in _cumsum_inputs(t))


def _scaled(t: Trace) -> bool:
    return any(any(isinstance(x, (int, float)) and not isinstance(x, bool) for x in a[:2])
               for a, _, _ in _calls(t, "mul", "div", "truediv"))


def _sliced_mask(t: Trace) -> bool:
    buffers = {id(b): b for b in t.model.buffers() if b.dim() == 4}
    return bool(_calls(t, "masked_fill")) and any(
        id(a[0]) in buffers and r.shape[-1] < a[0].shape[-1] for a, _, r in _calls(t, "getitem"))


def _global_names(source: str) -> set[str]:
    tree = ast.parse(source)
    return {n.id for s in tree.body if isinstance(s, ast.Assign) for tg in s.targets
            for n in ast.walk(tg) if isinstance(n, ast.Name)}


def _tied(source: str) -> bool:
    """A size global given to two dimensions of one input tensor (`torch.rand(n, n)`)."""
    tree = ast.parse(source)
    sizes = _global_names(source)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_inputs")
    for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
        names = [a.id for a in call.args if isinstance(a, ast.Name) and a.id in sizes]
        if len(names) != len(set(names)):
            return True
    return False


def _derived(source: str) -> bool:
    """A module global computed from another (`in_channels = planes * 4`, `shape = [h, w]`)."""
    sizes = _global_names(source)
    for s in ast.parse(source).body:
        if isinstance(s, ast.Assign) and any(isinstance(n, ast.Name) and n.id in sizes
                                             for n in ast.walk(s.value)):
            return True
    return False


def _level2(check: Callable[[Trace], bool]) -> Callable[[Trace, str, int], bool]:
    return lambda t, src, level: level >= 2 and check(t)


def _level3(check: Callable[[Trace], bool]) -> Callable[[Trace, str, int], bool]:
    return lambda t, src, level: level == 3 and check(t)


def _traced(check: Callable[[Trace], bool]) -> Callable[[Trace, str, int], bool]:
    return lambda t, src, level: check(t)


def _any_product(pred: Callable[[_Product], bool]) -> Callable[[Trace, str, int], bool]:
    return _traced(lambda t: any(pred(p) for p in _products(t)))


def _any_conv(pred: Callable[[dict], bool]) -> Callable[[Trace, str, int], bool]:
    return _traced(lambda t: any(pred(c) for c in _convs(t)))


def _called(*names: str) -> Callable[[Trace, str, int], bool]:
    return _traced(lambda t: bool(_calls(t, *names)))


def _irregular(p: _Product) -> bool:
    return sum(d > 64 and d % 8 != 0 for d in p.mkn) >= 2


def _large_k(p: _Product) -> bool:
    m, k, n = p.mkn
    return k >= 65536 and k >= 16 * max(m, n)


def _diagonal(t: Trace) -> bool:
    diagonals = {id(r) for a, _, r in _calls(t, "diag") if a[0].dim() == 1}
    return bool(diagonals & {id(p.a) for p in _products(t)})


def _triangular(t: Trace) -> bool:
    products = {id(p.out) for p in _products(t)}
    return any(id(a[0]) in products for a, _, _ in _calls(t, "tril", "triu"))


def _scalar_input(t: Trace) -> bool:
    scalars = [x for x in t.inputs if not isinstance(x, _T)]
    return any(y is x for a, _, _ in _calls(t, "mul") for y in a for x in scalars)


def _swish(t: Trace) -> bool:
    gates = {id(r): id(a[0]) for a, _, r in _calls(t, "sigmoid")}
    return bool(_calls(t, "silu")) or any(
        len(a) == 2 and gates.get(id(a[1])) == id(a[0]) for a, _, _ in _calls(t, "mul"))


def _mse(t: Trace) -> bool:
    differences = _made_by(t, "sub")
    squares = {id(r) for a, _, r in _calls(t, "pow") if id(a[0]) in differences}
    return bool(_calls(t, "mse_loss")) or _consumes(t, "mean", squares)


def _linear_weights(t: Trace) -> list:
    return [_arg(a, k, 1, "weight") for a, k, _ in _calls(t, "linear")]


def _mlp(t: Trace) -> bool:
    others = _convs(t) or _calls(t, "softmax", "multi_head_attention_forward", "lstm", "gru")
    return len({id(w) for w in _linear_weights(t)}) >= 3 and not others


def _transformer(t: Trace) -> bool:
    attention = _calls(t, "softmax", "multi_head_attention_forward")
    return bool(_calls(t, "layer_norm")) and _residual(t) and bool(attention)


def _cell_loop(t: Trace) -> bool:
    weights = _linear_weights(t)
    return len(_calls(t, "lstm_cell", "gru_cell")) >= 8 or any(
        sum(w is p for w in weights) >= 8 for p in t.model.parameters())


def _resnet(t: Trace) -> bool:
    convs = _convs(t)
    return (_residual(t) and bool(_calls(t, "batch_norm")) and bool(convs)
            and all(c["groups"] == 1 for c in convs))


def _vgg(t: Trace) -> bool:
    threes = sum(c["w"].shape[2:] == (3, 3) for c in _convs(t))
    return threes >= 4 and len(_calls(t, "max_pool2d")) >= 3


def _pointwise(c: dict) -> bool:
    return c["groups"] == 1 and set(c["w"].shape[2:]) == {1}


def _separable(t: Trace) -> bool:
    convs = _convs(t)
    return any(_depthwise(c) for c in convs) and any(_pointwise(c) for c in convs)


def _annotated(t: Trace, src: str, level: int) -> bool:
    return bool(re.search(r"def forward\(self,[^)]*: torch\.Tensor[^)]*\) -> torch\.Tensor:", src))


KINDS: dict[str, Callable[[Trace, str, int], bool]] = {
    # matrix products (linear layers count as x @ W^T)
    "matmul: square": _any_product(lambda p: len(set(p.mkn)) == 1 and p.mkn[0] >= 256),
    "matmul: rectangular": _any_product(lambda p: len(set(p.mkn)) > 1 and min(p.mkn) >= 256),
    "matmul: batched": _any_product(lambda p: p.a.dim() >= 3 and len(p.b_shape) >= 3),
    "matmul: transposed operand": _any_product(lambda p: p.a_transposed or p.b_transposed),
    "matmul: 3-D tensor times matrix": _any_product(lambda p: p.a.dim() == 3 and len(p.b_shape) == 2),
    "matmul: 4-D tensor times matrix": _any_product(lambda p: p.a.dim() == 4 and len(p.b_shape) == 2),
    "matmul: matrix-vector": _any_product(lambda p: p.mkn[2] == 1 and p.mkn[0] > 1),
    "matmul: diagonal times matrix": _traced(_diagonal),
    "matmul: triangular result": _traced(_triangular),
    "matmul: large K": _any_product(_large_k),
    "matmul: small K": _any_product(lambda p: p.mkn[1] <= 64 and min(p.mkn[0], p.mkn[2]) >= 1024),
    "matmul: irregular sizes": _any_product(_irregular),
    "matmul: matrix times a scalar input": _traced(_scalar_input),
    # activations
    **{f"activation: {n}": _called(n) for n in ("relu", "leaky_relu", "sigmoid", "tanh", "gelu",
                                                "selu", "hardsigmoid", "hardtanh", "softplus", "elu")},
    "activation: swish": _traced(_swish),
    "activation: softsign written out": lambda t, src, level: bool(
        re.search(r"/ \(1 \+ torch\.abs\((\w+)\)\)", src)) and bool(_calls(t, "abs")),
    "activation: tanh-approximate GELU written out": lambda t, src, level: (
        "0.044715" in src and bool(_calls(t, "tanh"))),
    # softmax
    "softmax over dim=1 of 2-D": _traced(lambda t: (1, 2) in _softmax_dims(t, "softmax")),
    "softmax over dim=-1": _traced(lambda t: any(d == -1 for d, _ in _softmax_dims(t, "softmax"))),
    "softmax over a middle dim": _traced(
        lambda t: any(_middle(*x) for x in _softmax_dims(t, "softmax"))),
    "log_softmax over dim=1 of 2-D": _traced(lambda t: (1, 2) in _softmax_dims(t, "log_softmax")),
    "log_softmax over a middle dim": _traced(
        lambda t: any(_middle(*x) for x in _softmax_dims(t, "log_softmax"))),
    # normalisation
    "norm: batch": _called("batch_norm"),
    "norm: instance": _called("instance_norm"),
    "norm: group": _called("group_norm"),
    "norm: layer over several trailing dims": _traced(lambda t: any(
        len(_arg(a, k, 1, "normalized_shape")) >= 2 for a, k, _ in _calls(t, "layer_norm"))),
    "norm: RMS written out": _traced(_rms),
    "norm: Frobenius division": _traced(lambda t: _lp(t, "fro")),
    "norm: L1 normalisation": _traced(_l1),
    "norm: L2 normalisation": _traced(lambda t: _lp(t, 2)),
    # reductions over a chosen dim
    **{f"reduction: {n} over a dim": _traced(functools.partial(lambda n, t: _reduces(t, n), n))
       for n in ("sum", "mean", "max", "min", "prod", "argmax", "argmin")},
    # cumulative
    "cumulative: cumsum": _called("cumsum"),
    "cumulative: cumprod": _called("cumprod"),
    "cumulative: reverse cumsum": _traced(lambda t: _consumes(t, "cumsum", _made_by(t, "flip"))),
    "cumulative: exclusive cumsum": _traced(_exclusive),
    "cumulative: masked cumsum": _traced(_masked_cumsum),
    # pooling
    **{f"pooling: {k} {d}-D": _called(f"{k}_pool{d}d") for k in ("max", "avg") for d in (1, 2, 3)},
    # convolutions
    **{f"conv: {d}-D": _any_conv(functools.partial(lambda d, c: c["dims"] == d, d))
       for d in (1, 2, 3)},
    "conv: transposed": _any_conv(lambda c: c["transposed"]),
    "conv: depthwise": _any_conv(_depthwise),
    "conv: depthwise-separable": _traced(_separable),
    "conv: dilated": _any_conv(lambda c: max(c["dilation"]) > 1),
    "conv: strided": _any_conv(lambda c: max(c["stride"]) > 1),
    "conv: grouped": _any_conv(lambda c: c["groups"] > 1 and not _depthwise(c)),
    "conv: asymmetric kernel": _any_conv(lambda c: len(set(c["w"].shape[2:])) > 1),
    # losses
    "loss: MSE": _traced(_mse),
    "loss: cross-entropy": _called("cross_entropy"),
    "loss: Huber / smooth L1": _called("smooth_l1_loss", "huber_loss"),
    "loss: KL divergence": _called("kl_div"),
    "loss: hinge": _traced(lambda t: _consumes(t, "clamp", _made_by(t, "rsub"))),
    "loss: cosine similarity": _called("cosine_similarity"),
    "loss: triplet margin": _called("triplet_margin_loss"),
    # compositions (levels 2 and 3)
    "composition: GEMM then activation": _level2(
        lambda t: bool(_products(t)) and bool(_calls(t, *_ACTIVATIONS))),
    "composition: convolution then activation": _level2(
        lambda t: bool(_convs(t)) and bool(_calls(t, *_ACTIVATIONS))),
    "composition: GEMM or convolution then normalisation": _level2(lambda t: bool(
        _products(t) or _convs(t)) and (bool(_calls(t, *_NORMS)) or _written_norm(t))),
    "composition: convolution then pooling": _level2(
        lambda t: bool(_convs(t)) and bool(_calls(t, *_POOLS))),
    "composition: GEMM or convolution then reduction": _level2(
        lambda t: bool(_products(t) or _convs(t)) and _reduces(t, *_REDUCTIONS)),
    "composition: scaling by a constant": _level2(_scaled),
    "composition: residual connection": _level2(_residual),
    "network: MLP": _level3(_mlp),
    "network: transformer block": _level3(_transformer),
    "network: causal attention, mask buffer sliced by sequence length": _traced(_sliced_mask),
    "network: nn.LSTM": _called("lstm"),
    "network: nn.GRU": _called("gru"),
    "network: bidirectional RNN": _traced(lambda t: any(
        isinstance(m, torch.nn.RNNBase) and m.bidirectional for m in t.model.modules())),
    "network: RNN cell stepped in a loop": _level3(_cell_loop),
    "network: ResNet-style block": _level3(_resnet),
    "network: VGG-style stack": _level3(_vgg),
    "network: MobileNet-style block": _level3(_separable),
    # the benchmark's idioms
    "idiom: annotated forward": _annotated,
    "idiom: several inputs": _traced(lambda t: len(t.inputs) >= 2),
    "idiom: a non-tensor input": _traced(lambda t: any(not isinstance(x, _T) for x in t.inputs)),
    "idiom: a list or tuple among the init inputs": _traced(
        lambda t: any(isinstance(x, (list, tuple)) for x in t.init_inputs)),
    "idiom: one size global for two dimensions": lambda t, src, level: _tied(src),
    "idiom: a global computed from another": lambda t, src, level: _derived(src),
}


# ---------------------------------------------------------------- CORPUS.md


def shown(files: list[Path], trace_of: Callable[[Path], Trace]) -> dict[str, list[str]]:
    """kind -> the files (`levelN/<N>_<Name>.py`) whose full-size trace shows it."""
    out: dict[str, list[str]] = {kind: [] for kind in KINDS}
    for path in files:
        t = trace_of(path)
        source, level = path.read_text(), level_of(path)
        for kind, check in KINDS.items():
            if check(t, source, level):
                out[kind].append(f"{path.parent.name}/{path.name}")
    return out


def read_table(text: str) -> dict[str, list[str]]:
    """CORPUS.md's table: kind -> files. Raises AssertionError when a row's count is wrong."""
    table: dict[str, list[str]] = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[1].isdigit():
            files = re.findall(r"level\d+/[^\s,`]+\.py", cells[2])
            assert int(cells[1]) == len(files), line
            table[cells[0].strip("`")] = files
    return table


_INTRO = """# A KernelBench-style corpus

{total} problem files ({level1} in level 1, {level2} in level 2, {level3} in level 3) in the
KernelBench contract and layout (`levelN/<N>_<Name>.py`, each with `class Model(nn.Module)`,
`get_inputs()` and `get_init_inputs()`), written for this project to represent the benchmark's
kinds of problems, its sizes and its idioms: `forward(self, x: torch.Tensor) -> torch.Tensor`
annotations, docstrings with Args / Returns, sizes in lower-case module globals (some given to
two dimensions, some computed from others, some in lists), `dim=1`, `torch.matmul` on plain
tensors, parameters from `get_init_inputs()`, attention masks kept as buffers and sliced by the
input's length, `nn.LSTM` / `nn.GRU` modules and whole small networks.

Sizes are large, as in the benchmark, but bounded for a GPU pass over the whole corpus: inputs and
parameters of each problem under 1.5 GiB in fp32, an estimated eager forward on an H200 between
0.05 and 20 ms, recurrent networks at 64 steps or fewer with small hidden sizes.

`tests/problems/test_kb_corpus.py` checks every file (contract, import through the KernelBench
folder loader with derived counts, the reference at full size on the meta device, the automatic
CPU sizes, and a meaningful output at reduced sizes on the CPU) and this table: each kind lists
exactly the files whose traced reference shows it (`kinds.py` holds the predicates), and every
kind has at least two. Regenerate it with `PYTHONPATH=. python tests/problems/kb_corpus/kinds.py`.

| kind | files | covering files |
|---|---|---|
"""


def table_markdown(files: list[Path], covered: dict[str, list[str]]) -> str:
    per_level = {f"level{n}": sum(p.parent.name == f"level{n}" for p in files) for n in (1, 2, 3)}
    rows = [f"| `{kind}` | {len(fs)} | {', '.join(fs)} |" for kind, fs in covered.items()]
    return _INTRO.format(total=len(files), **per_level) + "\n".join(rows) + "\n"


if __name__ == "__main__":
    found = corpus_files()
    (CORPUS / "CORPUS.md").write_text(
        table_markdown(found, shown(found, lambda p: trace(p.read_text(), problem_id(p), calls=True))))
    print(f"wrote {CORPUS / 'CORPUS.md'} ({len(found)} files, {len(KINDS)} kinds)", file=sys.stderr)
