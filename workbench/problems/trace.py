"""The one way to trace a problem's reference: on the meta device, at any size, never running it.

A KernelBench file at full size can ask for gigabytes and minutes of CPU work; none of that is
needed to know its shapes, its ops or its graph. Everything here builds the reference's `Model`
and its inputs on PyTorch's **meta device** (shapes and dtypes only: no memory, no arithmetic)
and runs or traces `forward` there:

    from workbench.problems import load_source
    from workbench.problems import trace

    loaded = load_source(source, name="L1/19_ReLU")     # sizes as the run uses them (cpu=True ...)
    model, inputs = trace.build(loaded)                # Model(*get_init_inputs()), get_inputs(): meta
    run = trace.run(loaded, on_op=record)              # forward on meta; record(op) sees every ATen op
    gm = trace.graph(loaded)                           # torch.fx graph, every node's shape known

- `run` (the problem's counts, `counts.py`; the CPU-size chooser, `cpu_sizes.py`) executes
  `forward` on meta tensors under a dispatch mode and hands each ATen op (`Op`) to `on_op`.
- `graph` (the lowering to Triton, `workbench.search.lowering`) is a `torch.fx` symbolic trace
  in which every node also carries its meta value (`node.meta["val"]`) and shape metadata
  (`node.meta["tensor_meta"]`, as `torch.fx.passes.shape_prop.ShapeProp` writes it). Sizes stay
  symbolic where `forward` computes with them (`B, T, C = x.size()`; `self.bias[:, :, :T, :T]`
  on a registered buffer is a graph node), so the graph is the same at every size unless the
  code branches or loops on a size: those are decided from the meta values (Python control flow
  on a size, `len(x.shape)`, `range(x.size(0))`), and the graph then holds that size's branch.
  Annotations on `forward` (`x: torch.Tensor) -> torch.Tensor`) are dropped from the graph: a
  generated forward names no types.
- Recurrent layers (`nn.RNN`, `nn.LSTM`, `nn.GRU`): run step by step on the meta device their
  forward issues tens of thousands of ops (half a minute for one KernelBench LSTM). Here their
  forward is replaced, for the trace only, by the same work issued at once per layer and
  direction: the input and hidden projections as two matmuls over all time steps (exact FLOPs),
  the gate arithmetic as elementwise ops over all steps, outputs of the right shapes. In the fx
  graph they stay one `call_module` node.
- Any `dim` (negative or positive), reductions and norms over several dimensions, matmuls on
  tensors and parameters, transposes, views and reshapes need nothing special: they are ATen
  ops with meta kernels. What has none (a data-dependent shape: `nonzero`, boolean masks,
  `.item()`) raises `TraceError` with the reason; so does a forward issuing more than
  `MAX_OPS` ops (a Python loop over a long dimension), which stops in seconds instead of minutes.

Only the reference (problem code the user chose to load, as `load_source` runs it) is traced
here; candidates never are. Errors in that code come out as `TraceError`, never as whatever the
code raised.
"""
from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from workbench.errors import WorkbenchError

#: Most ATen ops one traced forward may issue before the trace is refused (`TraceError`).
MAX_OPS = 20_000
#: Most seconds one trace may take (checked between ops) before it is refused.
MAX_SECONDS = 30.0


class TraceError(WorkbenchError):
    """The reference cannot be traced on the meta device; the message says why (the error of the
    problem's code, an op with no meta kernel, a data-dependent shape, too many ops)."""


@dataclass(frozen=True)
class Op:
    """One ATen op of the traced forward.

    `name`: the overload packet's name ("mm", "_softmax", "native_layer_norm");
    `func`: the op overload itself; `args` / `kwargs` as dispatched (meta tensors among them);
    `inputs` / `outputs`: the tensors among the arguments and the results, flattened;
    `result`: what the op returned, as it returned it.
    """

    name: str
    func: Any
    args: tuple
    kwargs: dict
    inputs: tuple
    outputs: tuple
    result: Any = None


@dataclass
class MetaRun:
    """A forward run on the meta device: the model and inputs it ran on, its output, and the
    number of ATen ops it issued."""

    model: Any
    inputs: list
    output: Any
    ops: int = 0
    seconds: float = 0.0


@dataclass
class _Budget:
    max_ops: int
    max_seconds: float
    ops: int = 0
    start: float = field(default_factory=time.monotonic)

    def tick(self) -> None:
        self.ops += 1
        if self.ops > self.max_ops:
            raise TraceError(f"the reference issues more than {self.max_ops} operations in one forward "
                             "(a Python loop over a long dimension?); it is not traced")
        if self.ops % 256 == 0 and time.monotonic() - self.start > self.max_seconds:
            raise TraceError(f"tracing the reference took longer than {self.max_seconds:.0f} s; it is not traced")


def _to_meta(x: Any) -> Any:
    import torch

    if isinstance(x, torch.Tensor):
        return x if x.device.type == "meta" else x.to("meta")
    if isinstance(x, (list, tuple)):
        return type(x)(_to_meta(v) for v in x)
    if isinstance(x, dict):
        return {k: _to_meta(v) for k, v in x.items()}
    return x


def _describe(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"[:500]


def build(loaded: Any) -> tuple[Any, list]:
    """(model, inputs) of a `LoadedProblem` on the meta device: `Model(*get_init_inputs())` and
    `get_inputs()` created under `torch.device("meta")` (nothing allocated, nothing drawn), any
    tensor made elsewhere moved there. TraceError when the file's code raises."""
    import torch

    try:
        with torch.device("meta"):
            init = _to_meta(list(loaded.get_init_inputs()))
            model = loaded.Model(*init)
            inputs = _to_meta(list(loaded.get_inputs()))
        model = model.to("meta")
    except TraceError:
        raise
    except Exception as e:  # noqa: BLE001 - the problem's code: reported as a TraceError
        raise TraceError(f"building the reference on the meta device failed: {_describe(e)}") from e
    return model, inputs


def run(loaded: Any, on_op: Callable[[Op], None] | None = None, *, max_ops: int = MAX_OPS,
        max_seconds: float = MAX_SECONDS) -> MetaRun:
    """`forward` of a `LoadedProblem` run on the meta device under `torch.no_grad()`; `on_op(op)`
    is called with every ATen op it issues (recurrent layers as their equivalent work, see the
    module doc). TraceError when it cannot run there or issues more than `max_ops` ops."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    model, inputs = build(loaded)
    budget = _Budget(max_ops, max_seconds)

    class _Ops(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            budget.tick()
            if on_op is not None:
                flat_in = tuple(a for a in tree_flatten((args, kwargs))[0] if isinstance(a, torch.Tensor))
                flat_out = tuple(o for o in tree_flatten(out)[0] if isinstance(o, torch.Tensor))
                on_op(Op(func.overloadpacket.__name__, func, tuple(args), dict(kwargs), flat_in, flat_out, out))
            return out

    try:
        with torch.device("meta"), torch.no_grad(), fast_recurrent(model), _Ops():
            out = model(*inputs)
    except TraceError:
        raise
    except Exception as e:  # noqa: BLE001 - the problem's code: reported as a TraceError
        raise TraceError(f"the reference's forward does not run on the meta device: {_describe(e)}") from e
    return MetaRun(model, inputs, out, budget.ops, time.monotonic() - budget.start)


# --------------------------------------------------------------------------- recurrent layers
def _recurrent_forward(mod: Any) -> Callable:
    """A stand-in forward for an `nn.RNNBase` module on meta tensors (see module doc)."""
    import torch

    def forward(x, hx=None):
        if not isinstance(x, torch.Tensor):
            raise TraceError(f"{type(mod).__name__} given a {type(x).__name__} (a packed sequence?); "
                             "only tensor inputs are traced")
        batched = x.dim() == 3
        if not batched and x.dim() != 2:
            raise TraceError(f"{type(mod).__name__} input of {x.dim()} dimensions; expected 2 or 3")
        if batched:
            steps, batch = (x.shape[1], x.shape[0]) if mod.batch_first else (x.shape[0], x.shape[1])
        else:
            steps, batch = x.shape[0], 1
        dirs = 2 if mod.bidirectional else 1
        hidden = mod.hidden_size
        out_size = getattr(mod, "proj_size", 0) or hidden
        gates = {"LSTM": 4, "GRU": 3}.get(mod.mode, 1)
        rows = steps * batch
        feed = x.reshape(rows, x.shape[-1])
        for layer in range(mod.num_layers):
            outs = []
            for d in range(dirs):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                w_ih, w_hh = getattr(mod, "weight_ih" + sfx), getattr(mod, "weight_hh" + sfx)
                g = torch.mm(feed, w_ih.t())
                h_all = torch.empty(rows, out_size, dtype=x.dtype)
                g = g + torch.mm(h_all, w_hh.t())
                if mod.bias:
                    g = g + getattr(mod, "bias_ih" + sfx) + getattr(mod, "bias_hh" + sfx)
                if mod.mode == "LSTM":
                    act = torch.sigmoid(g)
                    c = act[:, :hidden] * act[:, hidden:2 * hidden] + act[:, 2 * hidden:3 * hidden]
                    h = act[:, 3 * hidden:] * torch.tanh(c)
                    if getattr(mod, "proj_size", 0):
                        h = torch.mm(h, getattr(mod, "weight_hr" + sfx).t())
                elif mod.mode == "GRU":
                    act = torch.sigmoid(g)
                    n = torch.tanh(act[:, :hidden] * act[:, hidden:2 * hidden])
                    h = n + act[:, 2 * hidden:] * (h_all - n)
                else:
                    h = torch.relu(g) if mod.mode == "RNN_RELU" else torch.tanh(g)
                outs.append(h)
            feed = torch.cat(outs, dim=1) if dirs > 1 else outs[0]
        width = dirs * out_size
        if batched:
            shape = (batch, steps, width) if mod.batch_first else (steps, batch, width)
        else:
            shape = (steps, width)
        out = feed.reshape(shape)
        h_shape = (dirs * mod.num_layers, batch, out_size) if batched else (dirs * mod.num_layers, out_size)
        h_n = torch.empty(h_shape, dtype=x.dtype)
        if mod.mode == "LSTM":
            c_shape = (dirs * mod.num_layers, batch, hidden) if batched else (dirs * mod.num_layers, hidden)
            return out, (h_n, torch.empty(c_shape, dtype=x.dtype))
        return out, h_n

    return forward


@contextlib.contextmanager
def fast_recurrent(model: Any) -> Iterator[None]:
    """Within the block, every `nn.RNN` / `nn.LSTM` / `nn.GRU` in `model` (on the meta device)
    runs the stand-in forward of the module doc; their own forwards are restored after."""
    import torch.nn as nn

    patched = []
    for mod in model.modules():
        if isinstance(mod, nn.RNNBase) and "forward" not in mod.__dict__:
            mod.forward = _recurrent_forward(mod)
            patched.append(mod)
    try:
        yield
    finally:
        for mod in patched:
            mod.__dict__.pop("forward", None)


# --------------------------------------------------------------------------- fx graph
def graph(loaded: Any, *, max_ops: int = MAX_OPS, max_seconds: float = MAX_SECONDS):
    """The reference's `forward` as a `torch.fx.GraphModule` over the meta-device model (see the
    module doc for what is symbolic and what is decided from meta values). Every node has
    `meta["val"]` (its meta value) and, where it is or holds tensors, `meta["tensor_meta"]`.
    TraceError when the forward cannot be traced."""
    import torch
    import torch.fx as fx

    model, inputs = build(loaded)
    budget = _Budget(max_ops, max_seconds)
    tracer = _MetaTracer(inputs, budget)
    # A forward may assign to its module (`self.h0 = self.h0.to(x.device)`): the values it had
    # are put back after the trace, so the graph module holds tensors, not proxies.
    state = [(mod, k, v) for mod in model.modules() for k, v in vars(mod).items() if isinstance(v, torch.Tensor)]
    try:
        with torch.device("meta"), torch.no_grad(), fast_recurrent(model), _constructors_traced(tracer):
            g = tracer.trace(model)
    except TraceError:
        raise
    except Exception as e:  # noqa: BLE001 - the problem's code or fx's limits: a TraceError
        raise TraceError(f"the reference's forward does not trace with torch.fx: {_describe(e)}") from e
    finally:
        for mod, k, v in state:
            mod.__dict__[k] = v
    for node in g.nodes:  # a generated forward names no annotation types
        node.type = None
    gm = fx.GraphModule(tracer.root, g, "Traced")
    return gm


#: Tensor constructors whose sizes may come from the traced input (`torch.zeros(x.shape[1], h)`):
#: PyTorch does not hand a proxy among their sizes to fx, so they are wrapped while tracing.
_CONSTRUCTORS = ("zeros", "ones", "empty", "full", "rand", "randn", "randint", "arange", "eye", "linspace",
                 "tensor")


@contextlib.contextmanager
def _constructors_traced(tracer: Any) -> Iterator[None]:
    import torch
    import torch.fx as fx
    from torch.fx.node import map_aggregate

    originals = {name: getattr(torch, name) for name in _CONSTRUCTORS}

    def wrap(orig: Callable) -> Callable:
        def constructor(*args: Any, **kwargs: Any) -> Any:
            found: list = []
            map_aggregate((args, kwargs), lambda v: found.append(v) if isinstance(v, fx.Proxy) else None)
            if found:
                return tracer.create_proxy("call_function", orig, args, kwargs)
            return orig(*args, **kwargs)
        return constructor

    for name, orig in originals.items():
        setattr(torch, name, wrap(orig))
    try:
        yield
    finally:
        for name, orig in originals.items():
            setattr(torch, name, orig)


def _meta_of(value: Any) -> Any:
    import torch
    from torch.fx.node import map_aggregate
    from torch.fx.passes.shape_prop import _extract_tensor_metadata

    found = []

    def one(v):
        if isinstance(v, torch.Tensor):
            found.append(True)
            return _extract_tensor_metadata(v)
        return v

    meta = map_aggregate(value, one)
    return meta if found else None


def _make_tracer_classes():
    import torch.fx as fx
    from torch.fx.node import map_arg
    from torch.fx.proxy import Attribute

    class MetaValueProxy(fx.Proxy):
        """A proxy that also knows its meta value: Python control flow, `len`, iteration and
        integer conversion are answered from it."""

        def __len__(self) -> int:
            return len(self.node.meta["val"])

        def __index__(self) -> int:
            return int(self.node.meta["val"])

        def __int__(self) -> int:
            return int(self.node.meta["val"])

        def __getattr__(self, k: str):
            return MetaValueAttribute(self, k)

    class MetaValueAttribute(Attribute, MetaValueProxy):
        pass

    class Tracer(fx.Tracer):
        proxy_buffer_attributes = True

        def __init__(self, inputs: list, budget: _Budget):
            super().__init__()
            self._inputs = list(inputs)
            self._placeholders = 0
            self._budget = budget
            self._evaluating = False

        def proxy(self, node):
            return MetaValueProxy(node, self)

        def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, proxy_factory_fn=None):
            p = super().create_proxy(kind, target, args, kwargs, name, type_expr, proxy_factory_fn)
            node = p.node
            if "val" not in node.meta:
                node.meta["val"] = self._value(node)
                tm = _meta_of(node.meta["val"])
                if tm is not None:
                    node.meta["tensor_meta"] = tm
                node.meta["type"] = type(node.meta["val"])
            return p

        def call_module(self, m, forward, args, kwargs):
            if self._evaluating:  # computing a meta value: the module runs as it is
                return forward(*args, **kwargs)
            return super().call_module(m, forward, args, kwargs)

        def getattr(self, attr, attr_val, parameter_proxy_cache):
            if self._evaluating:
                return attr_val
            return super().getattr(attr, attr_val, parameter_proxy_cache)

        def _value(self, node) -> Any:
            self._budget.tick()
            self._evaluating = True
            try:
                return self._evaluate(node)
            finally:
                self._evaluating = False

        def _val(self, node) -> Any:
            # Nodes fx makes without create_proxy (constants' get_attr) get their value here.
            if "val" not in node.meta:
                node.meta["val"] = self._evaluate(node)
            return node.meta["val"]

        def _evaluate(self, node) -> Any:
            args = map_arg(node.args, self._val)
            kwargs = map_arg(node.kwargs, self._val)
            if node.op == "placeholder":
                i = self._placeholders
                self._placeholders += 1
                if i < len(self._inputs):
                    return self._inputs[i]
                return args[0] if args else None  # a parameter get_inputs() leaves at its default
            if node.op == "get_attr":
                obj = self.root
                for atom in str(node.target).split("."):
                    obj = getattr(obj, atom)
                return _to_meta(obj)
            if node.op == "call_function":
                return node.target(*args, **kwargs)
            if node.op == "call_method":
                return getattr(args[0], node.target)(*args[1:], **kwargs)
            if node.op == "call_module":
                return self.root.get_submodule(node.target)(*args, **kwargs)
            return None

        def to_bool(self, obj) -> bool:
            return bool(obj.node.meta["val"])

        def iter(self, obj):
            return iter([obj[i] for i in range(len(obj.node.meta["val"]))])

    return Tracer


_TRACER_CLASS: Any = None


def _MetaTracer(inputs: list, budget: _Budget):  # noqa: N802 - builds the class once (torch imported lazily)
    global _TRACER_CLASS
    if _TRACER_CLASS is None:
        _TRACER_CLASS = _make_tracer_classes()
    return _TRACER_CLASS(inputs, budget)


def numel(shape: Any) -> int:
    """Elements of a tensor of `shape`."""
    return int(math.prod(int(s) for s in shape))
