"""Generic seeds: the reference's own code with every op the Triton library (`tlib`) implements
routed to it, so that no problem stops before its first measurement.

`generic_source(problem)` rewrites the `forward` of `Model` and of every other module class of
the problem file, leaving the code around the ops as written (Python loops over a size, buffers
sliced by the input's length, custom blocks, early returns): it is size-generic by construction,
where a traced graph holds the sizes it was traced at. Rewritten:

- calls of submodules whose type the library implements (`self.conv(x)`, `self.features(x)` for a
  Sequential of such modules or of the file's own blocks) -> `_t_mod(self.conv, x)`;
- torch / torch.nn.functional calls and tensor methods the library implements
  (`torch.softmax(x, dim=1)`, `F.conv2d(...)`, `x.sum(dim=1)`) -> `_t_fn("softmax", x, dim=1)`;
- the operators + - * / ** @ & | ~, unary minus and comparisons -> `_t_op("add", a, b)`, which
  computes with the operator itself when neither side is a tensor (sizes, flags);
- `x += y` on a name -> `x = _t_iop("add", x, y)` and an in-place method statement `x.relu_()` ->
  `_t_fn("relu", x, inplace=True)`: on a tensor the result is written into it, as PyTorch does
  (an `inplace=True` argument or an in-place module likewise).

Everything else (views, indexing, cat / stack, tensor creation, unsupported ops and modules)
stays in PyTorch. Each library entry raises rather than fall back to PyTorch when it meets an
argument it does not implement, so a seed either runs its kernels or fails. The file is the
library (kernels, then the dispatch functions; only the entries the seed can reach, `tlib.prune`:
the branches of the dispatch for ops and module types the seed passes, and what they call), the
problem's module with its classes' forwards
rewritten and `Model` renamed `_Reference`, and `class ModelNew(_Reference)` with the rewritten
`Model.forward`. The reference (problem code the user loaded) is built on the meta device to
learn its submodules' types; no candidate is run here.
"""
from __future__ import annotations

import ast
from typing import Any

from workbench.records import Problem
from workbench.search.lowering_templates import interpreted
from workbench.seeds import tlib

#: Module classes `tlib._t_mod` implements (kept equal to it by a test).
MODULES = frozenset({
    "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "Identity", "ReLU", "ReLU6", "SELU", "SiLU",
    "Mish", "Sigmoid", "LogSigmoid", "Tanh", "Hardsigmoid", "Hardswish", "Softsign", "Tanhshrink", "LeakyReLU",
    "ELU", "CELU", "GELU", "Softplus", "Hardtanh", "Flatten", "Softmax", "LogSoftmax", "Linear", "Conv1d", "Conv2d",
    "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "MaxPool1d", "MaxPool2d", "MaxPool3d",
    "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "LayerNorm", "RMSNorm", "GroupNorm",
    "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "RNN", "LSTM",
    "GRU", "RNNCell", "LSTMCell", "GRUCell", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "KLDivLoss", "BCELoss",
    "CrossEntropyLoss", "TripletMarginLoss", "CosineSimilarity", "PairwiseDistance"})
#: torch / torch.nn.functional functions `tlib._t_fn` implements.
FUNCTIONS = frozenset({
    "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout", "relu", "relu6",
    "selu", "silu", "mish", "sigmoid", "logsigmoid", "tanh", "hardsigmoid", "hardswish", "softsign", "tanhshrink",
    "exp", "log", "log2", "log1p", "expm1", "abs", "neg", "negative", "sqrt", "rsqrt", "reciprocal", "square", "sin",
    "cos", "erf", "floor", "ceil", "sign", "logical_not", "leaky_relu", "elu", "celu", "gelu", "softplus",
    "hardtanh", "clamp", "clip", "clamp_min", "clamp_max", "add", "sub", "subtract", "mul", "multiply", "div",
    "divide", "true_divide", "maximum", "minimum", "fmax", "fmin", "gt", "greater", "lt", "less", "ge", "le", "eq",
    "ne", "logical_and", "logical_or", "xlogy", "rsub", "pow", "where", "masked_fill", "max", "min", "sum", "mean",
    "amax", "amin", "prod", "argmax", "argmin", "norm", "softmax", "log_softmax", "cumsum", "cumprod", "matmul", "mm",
    "bmm", "linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
    "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "adaptive_max_pool3d", "layer_norm", "rms_norm", "group_norm", "batch_norm", "mse_loss", "l1_loss",
    "smooth_l1_loss", "huber_loss", "binary_cross_entropy", "kl_div", "cross_entropy", "cosine_similarity",
    "pairwise_distance", "triplet_margin_loss", "einsum"})
#: Tensor methods routed to `_t_fn` (the tensor becomes the first argument). Names a plain Python
#: object also has (`index`, `copy`, `count`) are not among them.
METHODS = frozenset({
    "relu", "sigmoid", "tanh", "exp", "log", "log2", "log1p", "expm1", "abs", "neg", "sqrt", "rsqrt", "reciprocal",
    "square", "sin", "cos", "erf", "floor", "ceil", "sign", "logical_not", "clamp", "clip", "clamp_min", "clamp_max",
    "add", "sub", "mul", "div", "true_divide", "maximum", "minimum", "gt", "lt", "ge", "le", "eq", "ne",
    "logical_and", "logical_or", "pow", "masked_fill", "max", "min", "sum", "mean", "amax", "amin", "prod", "argmax",
    "argmin", "norm", "softmax", "log_softmax", "cumsum", "cumprod", "matmul", "mm", "bmm"})
_NAMESPACES = ("torch", "torch.nn.functional", "torch.special")
_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow", ast.MatMult: "matmul",
           ast.BitAnd: "and", ast.BitOr: "or"}
_CMPOPS = {ast.Gt: "gt", ast.Lt: "lt", ast.GtE: "ge", ast.LtE: "le", ast.Eq: "eq", ast.NotEq: "ne"}
HEADER = "import torch\nimport torch.nn as nn\nimport triton\nimport triton.language as tl\n"


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    return None


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> module path for the file's imports (`F` -> torch.nn.functional)."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def _supported_module(m: Any, local: set[str]) -> bool:
    """Whether `_t_mod` runs module `m` (recursively for a Sequential)."""
    kind = type(m).__name__
    if kind in local:
        return True
    if kind == "Sequential":
        return all(_supported_module(c, local) for c in m)
    return kind in MODULES


class _Rewriter(ast.NodeTransformer):
    """Rewrites one forward (see module doc); `instance` is a module of the forward's class."""

    def __init__(self, instance: Any, aliases: dict[str, str], local: set[str]):
        self.instance, self.aliases, self.local = instance, aliases, local
        self.loop_modules: set[str] = set()
        self.count = 0

    # ------------------------------------------------------------- helpers
    def _module_at(self, node: ast.AST) -> Any:
        path = _dotted(node)
        if not path or not path.startswith("self.") or self.instance is None:
            return None
        obj = self.instance
        for part in path.split(".")[1:]:
            obj = getattr(obj, part, None)
            if obj is None:
                return None
        import torch.nn as nn

        return obj if isinstance(obj, nn.Module) else None

    def _namespace_fn(self, func: ast.AST) -> str | None:
        path = _dotted(func)
        if not path or "." not in path:
            return None
        head, _, name = path.rpartition(".")
        first, _, rest = head.partition(".")
        full = self.aliases.get(first, first) + ("." + rest if rest else "")
        return name if full in _NAMESPACES and name in FUNCTIONS else None

    def _call(self, target: str, args: list, keywords: list) -> ast.Call:
        self.count += 1
        return ast.Call(func=ast.Name(target, ast.Load()), args=args, keywords=keywords)

    # ------------------------------------------------------------- statements
    def visit_For(self, node: ast.For) -> ast.AST:
        mod = self._module_at(node.iter)
        added = None
        if isinstance(node.target, ast.Name) and mod is not None and type(mod).__name__ in ("ModuleList", "Sequential") \
                and all(_supported_module(c, self.local) for c in mod):
            added = node.target.id
            self.loop_modules.add(added)
        self.generic_visit(node)
        if added:
            self.loop_modules.discard(added)
        return node

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        self.generic_visit(node)
        op = _BINOPS.get(type(node.op))
        if op is None or not isinstance(node.target, ast.Name):
            return node
        value = self._call("_t_iop", [ast.Constant(op), ast.Name(node.target.id, ast.Load()), node.value], [])
        return ast.Assign(targets=[ast.Name(node.target.id, ast.Store())], value=value)

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        call = node.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) \
                and call.func.attr.endswith("_") and call.func.attr[:-1] in METHODS:
            self.generic_visit(call)
            return ast.Expr(self._call("_t_fn", [ast.Constant(call.func.attr[:-1]), call.func.value, *call.args],
                                       call.keywords + [ast.keyword("inplace", ast.Constant(True))]))
        self.generic_visit(node)
        return node

    # ------------------------------------------------------------- expressions
    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
        mod = self._module_at(func)
        if mod is not None:
            if _supported_module(mod, self.local):
                return self._call("_t_mod", [func, *node.args], node.keywords)
            return node
        if isinstance(func, ast.Name) and func.id in self.loop_modules:
            return self._call("_t_mod", [func, *node.args], node.keywords)
        name = self._namespace_fn(func)
        if name is not None:
            return self._call("_t_fn", [ast.Constant(name), *node.args], node.keywords)
        if isinstance(func, ast.Attribute) and func.attr in METHODS and _dotted(func.value) not in self.aliases \
                and not (isinstance(func.value, ast.Name) and func.value.id in ("self", "super")):
            return self._call("_t_fn", [ast.Constant(func.attr), func.value, *node.args], node.keywords)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        op = _BINOPS.get(type(node.op))
        if op is None:
            return node
        return self._call("_t_op", [ast.Constant(op), node.left, node.right], [])

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.USub) and not isinstance(node.operand, ast.Constant):
            return self._call("_t_op", [ast.Constant("neg"), node.operand], [])
        if isinstance(node.op, ast.Invert):
            return self._call("_t_op", [ast.Constant("not"), node.operand], [])
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if len(node.ops) != 1 or type(node.ops[0]) not in _CMPOPS:
            return node
        return self._call("_t_op", [ast.Constant(_CMPOPS[type(node.ops[0])]), node.left, node.comparators[0]], [])

    # Annotations and nested functions are left as written.
    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        return node


def _instances(problem: Problem) -> tuple[Any, dict[str, Any]] | None:
    """The reference's model built on the meta device at its CPU sizes, and one instance of each
    module class it holds, by class name."""
    from workbench.problems import load_source, trace

    try:
        model, _ = trace.build(load_source(problem.source, name=problem.id, cpu=True))
    except Exception:  # noqa: BLE001 - a reference that does not build gets no generic seed
        return None
    found: dict[str, Any] = {}
    for m in model.modules():
        found.setdefault(type(m).__name__, m)
    return model, found


def _forward(cls: ast.ClassDef) -> ast.FunctionDef | None:
    return next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)


def generic_source(problem: Problem) -> str | None:
    """The generic seed's source for `problem`, or None when the reference does not build on the
    meta device, has no `Model.forward`, or nothing in it is routed to the library."""
    built = _instances(problem)
    if built is None:
        return None
    model, instances = built
    tree = ast.parse(problem.source)
    aliases = _aliases(tree)
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    local = {c.name for c in classes if c.name != "Model" and c.name in instances}
    model_forward = None
    total = 0
    body = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in ("get_inputs", "get_init_inputs"):
            continue
        if isinstance(node, ast.ClassDef) and (node.name in local or node.name == "Model"):
            fwd = _forward(node)
            if fwd is not None:
                instance = model if node.name == "Model" else instances.get(node.name)
                rw = _Rewriter(instance, aliases, local)
                new = rw.visit(ast.parse(ast.unparse(fwd)).body[0])
                total += rw.count
                if node.name == "Model":
                    model_forward = new
                else:
                    node.body = [new if n is fwd else n for n in node.body]
        if isinstance(node, ast.ClassDef) and node.name == "Model":
            node.name = "_Reference"
        body.append(node)
    if model_forward is None or total == 0:
        return None
    tree.body = body
    for node in ast.walk(tree):  # super(Model, self) and other self-references
        if isinstance(node, ast.Name) and node.id == "Model":
            node.id = "_Reference"
    for a in model_forward.args.args + model_forward.args.kwonlyargs:
        a.annotation = None
    model_forward.returns = None
    doc = (f'"""Seed for {problem.id}, generated by workbench.seeds.generic: the reference\'s code with each op the\n'
           'Triton library below implements routed to it, everything else in PyTorch as written."""\n')
    new_model = ast.ClassDef(name="ModelNew", bases=[ast.Name("_Reference", ast.Load())], keywords=[],
                             body=[model_forward], decorator_list=[], type_params=[])
    ast.fix_missing_locations(new_model)
    user = ast.unparse(tree) + "\n\n\n" + ast.unparse(new_model) + "\n"
    # Only the library's entries this seed can reach: the search's operators then tune kernels
    # the seed runs, and every process that reads the seed parses less.
    library = tlib.prune(tlib.render_all("interpreter" if interpreted() else "gpu"), user, kinds=set(instances))
    return doc + HEADER + library + "\n\n" + user
