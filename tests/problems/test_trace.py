"""The one tracing entry point (workbench.problems.trace): the benchmark's idioms traced on the meta
device at full size, fast, and recurrent layers stood in for by work of the same shapes."""
from __future__ import annotations

import time
from pathlib import Path

import pytest
import torch
import torch.nn as nn

from workbench.problems import load_source, trace
from workbench.problems.counts import derive_counts

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
NO_INIT = "\ndef get_init_inputs():\n    return []\n"

# Each: the forward's body, the inputs' shapes (sizes as the benchmark writes them: large), the
# output's shape. Every one is traced at its full size on the meta device.
IDIOMS = {
    "annotated softmax dim=1": (
        "def forward(self, x: torch.Tensor) -> torch.Tensor:\n        return torch.softmax(x, dim=1)",
        [(4096, 393216)], (4096, 393216)),
    "layer norm over three dims": (
        "def forward(self, x: torch.Tensor) -> torch.Tensor:\n"
        "        return F.layer_norm(x, x.shape[1:])",
        [(16, 64, 256, 256)], (16, 64, 256, 256)),
    "frobenius norm": (
        "def forward(self, x):\n        return x / torch.norm(x, p='fro')",
        [(112, 64, 512, 512)], (112, 64, 512, 512)),
    "mean over dims (1, 2) keepdim": (
        "def forward(self, x):\n        return x - x.mean(dim=(1, 2), keepdim=True)",
        [(128, 4096, 4095)], (128, 4096, 4095)),
    "positive dim argmax": (
        "def forward(self, x):\n        return torch.argmax(x, dim=2)",
        [(128, 4096, 4095)], (128, 4096)),
    "matmul of plain tensors, transposed": (
        "def forward(self, A, B):\n        return torch.matmul(A.T, B.T)",
        [(4096, 8192), (16384, 4096)], (8192, 16384)),
    "batched and 4-D tensor-matrix": (
        "def forward(self, A, B):\n        return torch.einsum('bijl,lk->bijk', A, B)",
        [(8, 256, 512, 256), (256, 768)], (8, 256, 512, 768)),
    "bmm then reshape": (
        "def forward(self, A, B):\n        return torch.bmm(A, B).reshape(A.size(0), -1)",
        [(128, 512, 1024), (128, 1024, 2048)], (128, 512 * 2048)),
    "cumsum reversed": (
        "def forward(self, x):\n        return torch.cumsum(x.flip(1), dim=1).flip(1)",
        [(32768, 32768)], (32768, 32768)),
}


def _source(body: str, shapes) -> str:
    inputs = ", ".join(f"torch.randn{tuple(s)}" for s in shapes)
    return (HEADER + "\nclass Model(nn.Module):\n    " + body + "\n\ndef get_inputs():\n    return [" + inputs
            + "]\n" + NO_INIT)


@pytest.mark.parametrize("name", list(IDIOMS))
def test_the_benchmarks_idioms_trace_at_full_size(name):
    body, shapes, out_shape = IDIOMS[name]
    loaded = load_source(_source(body, shapes), name=name)
    t0 = time.monotonic()
    run = trace.run(loaded)
    assert tuple(run.output.shape) == out_shape and run.output.device.type == "meta"
    gm = trace.graph(loaded)
    out_node = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    assert tuple(out_node.meta["tensor_meta"].shape) == out_shape
    assert time.monotonic() - t0 < 60  # seconds at most (cold imports included), never minutes
    assert derive_counts(loaded).source == "derived"
    # No annotation survives into generated code.
    assert "torch.Tensor" not in gm.code


ATTENTION = HEADER + """import math
batch_size, max_seqlen, seq_len, n_embd, n_head = 128, 1024, 512, 768, 8


class Model(nn.Module):
    def __init__(self, n_embd, n_head, max_seqlen):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.register_buffer("bias", torch.tril(torch.ones(max_seqlen, max_seqlen))
                             .view(1, 1, max_seqlen, max_seqlen))
        self.n_head = n_head

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
        if len(x.shape) == 3 and x.dim() == 3:
            att = F.softmax(att, dim=-1)
        return (att @ v).transpose(1, 2).contiguous().view(B, T, C)


def get_inputs():
    return [torch.randn(batch_size, seq_len, n_embd)]


def get_init_inputs():
    return [n_embd, n_head, max_seqlen]
"""


def test_a_buffer_sliced_by_a_traced_size_and_control_flow_on_sizes():
    small = load_source(ATTENTION, name="attn", sizes={"batch_size": 2, "seq_len": 5, "n_embd": 32,
                                                        "max_seqlen": 8})
    full = load_source(ATTENTION, name="attn")
    gms = [trace.graph(x) for x in (full, small)]
    # The slice is a graph node over the traced size, so both sizes give the same graph.
    assert gms[0].code == gms[1].code
    assert "self.bias" in gms[0].code and "size()" in gms[0].code
    shapes = {n.name: tuple(n.meta["tensor_meta"].shape) for n in gms[0].graph.nodes
              if hasattr(n.meta.get("tensor_meta"), "shape")}
    assert (1, 1, 512, 512) in shapes.values() and (128, 512, 768) in shapes.values()
    # The graph computes what the module does (checked for real at the small size).
    torch.manual_seed(0)
    model = small.Model(*small.get_init_inputs())
    x = small.get_inputs()[0]
    rebuilt = torch.fx.GraphModule(model, trace.graph(small).graph)
    with torch.no_grad():
        torch.testing.assert_close(rebuilt(x), model(x))


@pytest.mark.parametrize("kind, kwargs, shape", [
    ("LSTM", dict(batch_first=True), (10, 512, 128)),
    ("LSTM", dict(bidirectional=True), (512, 10, 128)),
    ("LSTM", dict(batch_first=True, proj_size=64), (10, 512, 128)),
    ("GRU", dict(batch_first=False, bidirectional=True), (512, 10, 128)),
    ("GRU", dict(), (512, 128)),  # unbatched
    ("RNN", dict(nonlinearity="relu", batch_first=True), (10, 512, 128)),
])
def test_recurrent_layers_trace_in_seconds_with_the_real_shapes(kind, kwargs, shape):
    src = HEADER + f"""
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.{kind}(128, 256, 6, **{kwargs!r})

    def forward(self, x):
        return self.rnn(x)


def get_inputs():
    return [torch.randn{shape}]
""" + NO_INIT
    loaded = load_source(src, name=kind)
    mm_flops = []

    def record(op):
        if op.name == "mm":
            mm_flops.append(2 * op.inputs[0].shape[0] * op.inputs[0].shape[1] * op.inputs[1].shape[1])

    t0 = time.monotonic()
    run = trace.run(loaded, on_op=record)
    assert time.monotonic() - t0 < 30, "a recurrent reference must not take minutes to trace"
    assert run.ops < 1000  # step by step, the meta device would see tens of thousands of ops
    gm = trace.graph(loaded)
    assert "self.rnn(x)" in gm.code
    # The same module at a small sequence length, run for real on the CPU: same output shapes,
    # and the trace's matmuls have exactly its matmul FLOPs at full length.
    steps = 3
    small_shape = list(shape)
    small_shape[1 if kwargs.get("batch_first") else 0] = steps
    real = getattr(nn, kind)(128, 256, 6, **kwargs)
    with torch.no_grad():
        want = real(torch.randn(*small_shape))
    got = run.output
    flat_want = [want[0]] + (list(want[1]) if isinstance(want[1], tuple) else [want[1]])
    flat_got = [got[0]] + (list(got[1]) if isinstance(got[1], tuple) else [got[1]])
    for w, g in zip(flat_want, flat_got):
        expect = list(w.shape)
        if w is flat_want[0]:
            expect[1 if kwargs.get("batch_first") else 0] = shape[1 if kwargs.get("batch_first") else 0]
        assert list(g.shape) == expect
    # Matmul FLOPs of the recurrence, by hand: per layer, direction and time step, the input and
    # hidden projections (and an LSTM's projection of h) for each sequence in the batch.
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[kind]
    dirs = 2 if kwargs.get("bidirectional") else 1
    hidden, h_out = 256, kwargs.get("proj_size") or 256
    full_steps = shape[1 if kwargs.get("batch_first") else 0]
    batch = 1 if len(shape) == 2 else shape[0 if kwargs.get("batch_first") else 1]
    want_flops = 0
    for layer in range(6):
        width = 128 if layer == 0 else dirs * h_out
        per_step = 2 * batch * (width * gates * hidden + h_out * gates * hidden)
        if kwargs.get("proj_size"):
            per_step += 2 * batch * hidden * h_out
        want_flops += dirs * full_steps * per_step
    assert sum(mm_flops) == want_flops


def test_untraceable_references_are_refused_fast_with_the_reason():
    data_dependent = _source("def forward(self, x):\n        return x[x > 0].sum()", [(1024,)])
    with pytest.raises(trace.TraceError, match="meta"):
        trace.run(load_source(data_dependent, name="dd"))
    loop = _source("def forward(self, x):\n        for _ in range(30000):\n            x = x + 1\n"
                   "        return x", [(16,)])
    t0 = time.monotonic()
    with pytest.raises(trace.TraceError, match="more than"):
        trace.run(load_source(loop, name="loop"))
    assert time.monotonic() - t0 < 30
    broken = _source("def forward(self, x):\n        return undefined_name(x)", [(4,)])
    assert "undefined_name" in derive_counts(load_source(broken, name="b")).error


CORPORA = sorted((Path(__file__).parent / "kb_corpus").glob("level*/*.py")) + \
    sorted((Path(__file__).parent / "corpus").glob("level*/*.py"))


@pytest.mark.parametrize("path", CORPORA, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}/{p.stem}")
def test_every_corpus_file_has_an_fx_graph_at_full_size(path):
    """The lowering's view of each corpus file: its fx graph at full size on the meta device, the
    output's shapes those of the reference run there."""
    loaded = load_source(path.read_text(), name=path.stem)
    run = trace.run(loaded)
    gm = trace.graph(loaded)
    out = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    want = [tuple(t.shape) for t in torch.utils._pytree.tree_flatten(run.output)[0] if isinstance(t, torch.Tensor)]
    got_meta = torch.fx.node.map_arg(out, lambda n: n.meta.get("val"))
    got = [tuple(t.shape) for t in torch.utils._pytree.tree_flatten(got_meta)[0] if isinstance(t, torch.Tensor)]
    assert got == want and want
