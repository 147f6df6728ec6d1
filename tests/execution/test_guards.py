"""Unit tests of the static and dynamic guards (no subprocess)."""
from __future__ import annotations

import threading
import time

import torch

from workbench.execution import guards
from workbench.problems import get_problem

SOFTMAX = get_problem("L1/01_softmax").source
MATMUL = get_problem("L1/14_matmul_square_fp32").source

HEAD = "import torch\nimport torch.nn as nn\n"


def _cand(body: str, pre: str = "") -> str:
    return HEAD + pre + "class ModelNew(nn.Module):\n    def forward(self, x):\n" + \
        "".join(f"        {line}\n" for line in body.splitlines())


def test_honest_manual_softmax_has_no_findings():
    src = _cand("e = (x - x.amax(dim=-1, keepdim=True)).exp()\nreturn e / e.sum(dim=-1, keepdim=True)")
    assert guards.static_findings(src, SOFTMAX) == []


def test_each_static_pattern_is_named():
    cases = {
        "try/except": _cand("try:\n    return x.exp()\nexcept Exception:\n    return x"),
        "re-runs PyTorch": _cand("return torch.nn.functional.softmax(x, -1)"),
        "CUDA stream": _cand("s = torch.cuda.Stream()\nreturn x"),
        "imports threading": "import threading\n" + _cand("return x"),
        "patching": _cand("return x", pre="torch.cuda.synchronize = lambda: None\n"),
        "builtins": _cand("return x", pre="import builtins\nbuiltins.len = lambda o: 0\n"),
        "keyed by pointer": _cand("return CACHE[x.data_ptr()]", pre="CACHE = {}\n"),
        "matmul precision": _cand("torch.set_float32_matmul_precision('medium')\nreturn x"),
        "sys.modules": "import sys\n" + _cand("return sys.modules['m'].Model()(x)"),
        "opens a file": _cand("open('/etc/passwd').read()\nreturn x"),
        "dynamic code": _cand("return eval('x')"),
    }
    for needle, src in cases.items():
        found = " | ".join(guards.static_findings(src, SOFTMAX))
        assert needle in found, (needle, found)


def test_matmul_operator_counts_as_the_reference_matmul():
    src = _cand("return x @ x")
    assert any("re-runs PyTorch" in f for f in guards.static_findings(src, MATMUL))
    # A hand-written reduction is not the reference's op.
    src = _cand("return (x[:, :, None] * x[None, :, :]).sum(dim=1)")
    assert not guards.static_findings(src, MATMUL)


def test_model_eval_method_is_not_dynamic_code():
    src = _cand("return x.exp()") + "\n    def train(self, mode=True):\n        return self.eval()\n"
    assert not guards.static_findings(src, SOFTMAX)


def test_runtime_snapshot_sees_a_patched_function_and_restores_nothing():
    before = guards.RuntimeSnapshot()
    original = torch.allclose
    try:
        torch.allclose = lambda *a, **k: True
        changes = guards.RuntimeSnapshot().changes_since(before)
    finally:
        torch.allclose = original
    assert any("torch.allclose was replaced" in c for c in changes)
    assert guards.RuntimeSnapshot().changes_since(before) == []


def test_runtime_snapshot_sees_precision_flags_and_threads():
    before = guards.RuntimeSnapshot()
    old = torch.backends.cuda.matmul.allow_tf32
    stop = threading.Event()
    t = threading.Thread(target=stop.wait, daemon=True)
    try:
        torch.backends.cuda.matmul.allow_tf32 = not old
        t.start()
        changes = guards.RuntimeSnapshot().changes_since(before)
        assert not any("thread" in c for c in guards.RuntimeSnapshot().changes_since(before, threads=False))
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old
        stop.set()
        t.join()
    assert any("allow_tf32" in c for c in changes)
    assert any("background thread" in c for c in changes)


def test_output_findings_aliasing_and_subclass():
    x = torch.randn(8, 8)
    ref = torch.randn(8, 8)
    assert guards.output_findings(x[1:], [x], [ref])  # a view of the input
    assert guards.output_findings(ref.view(-1), [x], [ref])  # the reference's own output
    assert guards.output_findings(x.clone(), [x], [ref]) == []

    class Sub(torch.Tensor):
        pass

    assert "subclass" in guards.output_findings(x.clone().as_subclass(Sub), [x], [ref])[0]


def test_degenerate_output():
    ref = torch.randn(64)
    assert guards.degenerate_finding(torch.zeros(64), ref)
    assert guards.degenerate_finding(torch.full((64,), 0.5), ref)
    assert guards.degenerate_finding(torch.zeros(64), torch.zeros(64)) is None  # reference is constant too
    assert guards.degenerate_finding(ref + 1e-3, ref) is None


def test_roofline():
    assert guards.roofline_finding(0.01, 0.1) is not None
    assert guards.roofline_finding(0.2, 0.1) is None
    assert guards.roofline_finding(0.01, None) is None


def test_snapshot_is_cheap():
    t0 = time.perf_counter()
    for _ in range(50):
        guards.RuntimeSnapshot()
    assert time.perf_counter() - t0 < 2.0


def test_the_guards_walk_visits_what_ast_walk_visits():
    import ast

    from workbench.execution.guards import _walk
    from workbench.zoo import zoo_candidates

    for c in zoo_candidates()[::25]:
        tree = ast.parse(c.source)
        # The same nodes as often (ast shares its Load/Store context objects between nodes).
        assert sorted(map(id, _walk(tree))) == sorted(map(id, ast.walk(tree))), c.origin


def test_a_reference_that_does_not_parse_leaves_only_the_candidates_own_findings():
    from workbench.zoo import zoo_candidates

    launcher = next(c for c in zoo_candidates() if c.backend == "triton" and "[grid](" in c.source)
    assert guards.static_findings(launcher.source, "class Model(:\n") == []
    assert guards.static_findings("import threading\n" + launcher.source, "class Model(:\n")
