"""Generic seeds: what the source rewrite routes to the Triton library, what it leaves as written,
and that the result is correct on the CPU (Triton interpreter) at sizes the seed never saw."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")

from workbench.execution.guards import static_findings  # noqa: E402
from workbench.problems import load_file, load_source  # noqa: E402
from workbench.seeds import seed_kind, seeds_for  # noqa: E402
from workbench.seeds.generic import generic_source  # noqa: E402

CELL_LOOP = '''"""An LSTM cell stepped in Python over a sequence, then a block of the file's own."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 12
seq_len = 10
input_size = 24
hidden_size = 20


class Head(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.fc = nn.Linear(hidden, 8)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return F.softmax(self.fc(h) * 2.0, dim=1)


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.cell = nn.LSTMCell(input_size, hidden_size)
        self.head = Head(hidden_size)
        self.hidden_size = hidden_size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.new_zeros(x.shape[0], self.hidden_size)
        c = x.new_zeros(x.shape[0], self.hidden_size)
        for t in range(x.shape[1]):
            h, c = self.cell(x[:, t, :], (h, c))
        h += 1.0
        return self.head(torch.relu(h)).sum(dim=-1, keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, seq_len, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
'''


def _problem(tmp_path, text: str, name: str = "cell_loop"):
    f = tmp_path / "level3" / f"{name}.py"
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(text)
    return load_file(f, with_counts=False)


def _run(problem, source: str, sizes: dict):
    import torch

    from workbench.execution.worker import _import_candidate, copy_state

    lp = load_source(problem.source, name=problem.id, sizes=sizes)
    torch.manual_seed(0)
    ref = lp.Model(*lp.get_init_inputs()).eval()
    with tempfile.TemporaryDirectory() as tmp:
        mod = _import_candidate(source, Path(tmp), "generic_under_test")
        torch.manual_seed(0)
        new = mod.ModelNew(*lp.get_init_inputs())
        copy_state(ref, new)
        inputs = lp.get_inputs()
        with torch.no_grad():
            return ref(*inputs), new.eval()(*inputs)


def test_the_rewrite_routes_modules_functions_methods_and_operators_and_keeps_python(tmp_path):
    p = _problem(tmp_path, CELL_LOOP)
    src = generic_source(p)
    assert src is not None and not static_findings(src, p.source)
    model_new = src[src.index("class ModelNew(_Reference):"):]
    # The Python loop over a size and the tensor creation stay as written.
    assert "for t in range(x.shape[1]):" in model_new and "x.new_zeros(" in model_new
    assert "_t_mod(self.cell, " in model_new and "_t_mod(self.head, " in model_new
    assert "_t_fn('relu', h)" in model_new and "_t_fn('sum', " in model_new
    assert "h = _t_iop('add', h, 1.0)" in model_new  # h += 1.0, into h
    # The file's own block is rewritten in place: its Linear, its operator, F.softmax.
    head = src[src.index("class Head(nn.Module):"):src.index("class _Reference")]
    assert "_t_fn('softmax', _t_op('mul', _t_mod(self.fc, h), 2.0), dim=1)" in head


def test_a_generic_seed_is_correct_at_sizes_it_never_saw(tmp_path):
    import torch

    p = _problem(tmp_path, CELL_LOOP)
    src = generic_source(p)
    for sizes in ({"batch_size": 5, "seq_len": 3}, {"batch_size": 9, "seq_len": 7, "hidden_size": 16}):
        want, got = _run(p, src, sizes)
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_unsupported_modules_stay_in_pytorch(tmp_path):
    text = CELL_LOOP.replace("self.cell = nn.LSTMCell(input_size, hidden_size)",
                             "self.cell = nn.LSTMCell(input_size, hidden_size)\n"
                             "        self.attn = nn.MultiheadAttention(hidden_size, 2, batch_first=True)")
    text = text.replace("        h += 1.0\n", "        h += 1.0\n        h = self.attn(h[:, None], h[:, None], "
                        "h[:, None])[0][:, 0]\n")
    p = _problem(tmp_path, text, "with_attention")
    src = generic_source(p)
    assert "self.attn(" in src and "_t_mod(self.attn" not in src


def test_every_seed_kind_is_offered_in_order_and_guarded(tmp_path):
    p = _problem(tmp_path, CELL_LOOP)
    seeds = seeds_for(p)
    kinds = [seed_kind(c.origin) for c in seeds]
    # All family kinds at once first, then the generic seed, then the family kinds one by one.
    assert kinds[0] == "family" and kinds[1] == "generic" and set(kinds[2:]) <= {"family"}
    assert seeds[0].origin == "lowering:elementwise+matmul+reduce+softmax+norm"
    for c in seeds:
        assert not static_findings(c.source, p.source), c.origin
        assert c.origin.startswith(("seed:", "lowering:"))


INPLACE = '''import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 6
cols = 40


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        y = x * 2.0
        z = F.relu(y, inplace=True)   # y is overwritten, and read again below
        w = x - 1.0
        w.clamp_(min=0.0)
        v = x + 0.5
        v += y
        u = self.act(x - 0.25)
        return z + y + w + v + u


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
'''


def test_in_place_ops_keep_their_semantics(tmp_path):
    import torch

    p = _problem(tmp_path, INPLACE, "inplace")
    src = generic_source(p)
    assert "inplace=True" in src and "_t_iop('add', v, y)" in src
    want, got = _run(p, src, {})
    torch.testing.assert_close(got, want)


GLOBAL_POOL = '''import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 3
channels = 5
depth = 6
size = 7


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool3 = nn.AdaptiveAvgPool3d((1, 1, 1))
        self.pool2 = nn.AdaptiveMaxPool2d(1)

    def forward(self, x):
        a = self.pool3(x)                                  # (batch, channels, 1, 1, 1)
        b = self.pool2(x[:, :, 0] * 2.0)                   # (batch, channels, 1, 1)
        c = F.adaptive_avg_pool1d(x[:, :, 0, 0], 1)        # (batch, channels, 1)
        d = F.adaptive_avg_pool2d(x[:, :, 0], (2, 3))      # a windowed adaptive pool, not global
        return a.flatten(1) + b.flatten(1) + c.flatten(1) + d.flatten(1).sum(1, keepdim=True)


def get_inputs():
    return [torch.randn(batch, channels, depth, size, size + 2)]


def get_init_inputs():
    return []
'''


def test_global_pooling_is_a_reduction_and_correct(tmp_path):
    """Adaptive pools to an output of 1 (global average / max pooling) reduce over the spatial
    dims (no window-loop launch: only the windowed adaptive pool launches _tl_pool), and all
    agree with PyTorch."""
    import torch

    from workbench.execution.worker import _import_candidate, copy_state

    p = _problem(tmp_path, GLOBAL_POOL, "global_pool")
    src = generic_source(p)
    assert src is not None and not static_findings(src, p.source)
    (tmp_path / "mod").mkdir()
    mod = _import_candidate(src, tmp_path / "mod", "global_pool_seed")
    launches = []

    class Counted:
        def __init__(self, fn):
            self.fn = fn

        def __getitem__(self, grid):
            launches.append(grid)
            return self.fn[grid]

    mod._tl_pool = Counted(mod._tl_pool)
    for sizes in ({}, {"batch": 2, "depth": 4, "size": 9}):
        lp = load_source(p.source, name=p.id, sizes=sizes)
        torch.manual_seed(0)
        ref = lp.Model(*lp.get_init_inputs()).eval()
        new = mod.ModelNew(*lp.get_init_inputs()).eval()
        copy_state(ref, new)
        inputs = lp.get_inputs()
        launches.clear()
        with torch.no_grad():
            torch.testing.assert_close(new(*inputs), ref(*inputs), rtol=1e-4, atol=1e-5)
        assert len(launches) == 1, launches


def _defined(src: str) -> set[str]:
    import ast

    return {n.name for n in ast.parse(src).body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def test_a_seed_carries_only_the_library_entries_it_can_reach(tmp_path):
    """tlib.prune: the cell loop's seed keeps the LSTM, Linear, softmax, reduction and
    elementwise paths and drops whole-sequence RNNs, convolutions, pooling, norms, scans and losses; the dispatch
    keeps the branches of the ops and module types the seed passes (and is still correct,
    above); the full library stays what render_all gives."""
    from workbench.seeds import tlib

    src = generic_source(_problem(tmp_path, CELL_LOOP))
    full = tlib.render_all("interpreter")
    have, every = _defined(src), _defined(full)
    assert {"_t_cell", "_t_rnn_layer", "_t_linear", "_t_softmax", "_t_reduce", "_t_unary", "_t_binary", "_t_fn", "_t_mod"} <= have
    assert not have & {"_t_rnn", "_t_conv", "_t_pool", "_t_norm", "_t_batchnorm", "_t_scan", "_t_rows", "_t_einsum"}
    assert len(have & every) < len(every) and len(src) < len(full)
    t_fn = src[src.index("def _t_fn("):src.index("\ndef ", src.index("def _t_fn(") + 1)]
    assert 'if name in ("softmax", "log_softmax"):' in t_fn and 'if name in ("cumsum", "cumprod"):' not in t_fn
    t_leaf = src[src.index("def _t_leaf("):]
    assert 'if kind == "Linear":' in t_leaf and 'if kind == "GroupNorm":' not in t_leaf
    # _t_fn's last resort, the losses, is kept with none of its branches: only its refusal.
    loss = src[src.index("def _loss("):src.index("\ndef ", src.index("def _loss(") + 1)]
    assert "mse_loss" not in loss and "raise _Unsupported" in loss


def test_pruning_keeps_what_it_cannot_read():
    """A dispatcher called with a name the rule cannot know (not a string constant) keeps every
    branch; a test it cannot evaluate keeps its branch; what is left compiles."""
    from workbench.seeds import tlib

    full = tlib.render_all("interpreter")
    some = tlib.prune(full, "y = _t_fn(op, x)\n")
    assert 'if name in ("cumsum", "cumprod"):' in some and "def _t_scan(" in some
    one = tlib.prune(full, "y = _t_fn('cumsum', x, dim=1)\n")
    assert "def _t_scan(" in one and "def _t_conv(" not in one
    # _t_fn's first branch (in-place arguments) reads kw and args as well: kept.
    assert 'if kw.get("inplace") is True' in one
    # Nothing used, nothing kept but the library's own top-level statements (none define).
    assert "def " not in tlib.prune(full, "")
