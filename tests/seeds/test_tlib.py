"""The Triton library of generic seeds against PyTorch, on the CPU (Triton interpreter): every
entry point at odd sizes and several dims, in the forms the rewriter routes to it."""
from __future__ import annotations

import importlib.util
import os
import sys

import pytest

os.environ.setdefault("TRITON_INTERPRET", "1")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from workbench.seeds import generic, tlib  # noqa: E402


@pytest.fixture(scope="module")
def m(tmp_path_factory):
    path = tmp_path_factory.mktemp("tlib") / "wb_tlib_under_test.py"
    path.write_text("import torch\nimport triton\nimport triton.language as tl\n" + tlib.render_all("interpreter"))
    spec = importlib.util.spec_from_file_location("wb_tlib_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    yield mod
    sys.modules.pop(spec.name, None)


def cmp(a, b, tol=1e-4):
    a = a[0] if isinstance(a, tuple) else a
    b = b[0] if isinstance(b, tuple) else b
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    if a.numel():
        assert (a.float() - b.float()).abs().max().item() <= tol


def test_every_entry_point_matches_pytorch(m):
    torch.manual_seed(0)
    x = torch.randn(33, 47)
    for op, ref in [("relu", torch.relu), ("gelu", F.gelu), ("sigmoid", torch.sigmoid), ("tanh", torch.tanh),
                    ("selu", F.selu), ("softplus", F.softplus), ("hardswish", F.hardswish), ("mish", F.mish)]:
        cmp(m._t_unary(op, x, 1.0, 20.0), ref(x))
    y = torch.randn(47)
    cmp(m._t_binary("add", x, y), x + y)
    cmp(m._t_binary("mul", x, 0.5), x * 0.5)
    cmp(m._t_binary("gt", x, 0.0), x > 0)
    cmp(m._t_where(x > 0, x, 0.0), torch.where(x > 0, x, 0.0))
    t3 = torch.randn(8, 37, 19)
    for dims in [1, 2, [1, 2], None, [0, 2]]:
        cmp(m._t_reduce("sum", t3, dims), t3.sum(dims) if dims is not None else t3.sum())
    cmp(m._t_reduce("mean", t3, 1, True), t3.mean(1, keepdim=True))
    cmp(m._t_reduce("amax", t3, 2), t3.amax(2))
    cmp(m._t_reduce("prod", t3 * 0.1 + 1, 1), (t3 * 0.1 + 1).prod(1))
    cmp(m._t_reduce("argmax", t3, 1), t3.argmax(1), 0)
    cmp(m._t_reduce("argmin", t3, 2), t3.argmin(2), 0)
    cmp(m._t_reduce("max_dim", t3, 1)[0], t3.max(1)[0])
    cmp(m._t_reduce("norm2", t3, None), torch.norm(t3))
    cmp(m._t_softmax(t3, 1), torch.softmax(t3, 1))
    cmp(m._t_softmax(t3, -1, True), torch.log_softmax(t3, -1))
    cmp(m._t_scan(t3, 1), t3.cumsum(1), 1e-4)
    cmp(m._t_scan(t3 * 0.1 + 1, 2, True), (t3 * 0.1 + 1).cumprod(2))
    a, b = torch.randn(3, 17, 33), torch.randn(3, 33, 21)
    cmp(m._t_matmul(a, b), a @ b)
    cmp(m._t_matmul(a, b[0]), a @ b[0])
    cmp(m._t_matmul(a[0], b[0, :, 0]), a[0] @ b[0, :, 0])
    w, bb = torch.randn(21, 33), torch.randn(21)
    cmp(m._t_linear(a, w, bb), F.linear(a, w, bb))
    xi = torch.randn(2, 6, 11, 13)
    cw, cb = torch.randn(8, 3, 3, 3), torch.randn(8)
    cmp(m._t_conv(xi, cw, cb, 2, 1, 1, 2), F.conv2d(xi, cw, cb, 2, 1, 1, 2))
    cw1 = torch.randn(4, 6, 3)
    x1 = torch.randn(2, 6, 20)
    cmp(m._t_conv(x1, cw1, None, 1, 2, 2, 1), F.conv1d(x1, cw1, None, 1, 2, 2, 1))
    tw = torch.randn(6, 4, 3, 3)
    cmp(m._t_conv(xi, tw, None, 2, 1, 1, 1, True, 1), F.conv_transpose2d(xi, tw, None, 2, 1, 1, 1, 1))
    tw3, x3 = torch.randn(6, 2, 3, 2, 3), torch.randn(2, 6, 5, 6, 7)
    cmp(m._t_conv(x3, tw3, None, (2, 1, 2), (1, 0, 1), 1, 3, True, 0),
        F.conv_transpose3d(x3, tw3, None, (2, 1, 2), (1, 0, 1), 0, 3))
    cmp(m._t_pool(xi, 2, 3, 2, 1, 1, False, True), F.max_pool2d(xi, 3, 2, 1))
    cmp(m._t_pool(xi, 2, 2, 2, 1, 2, True, True), F.max_pool2d(xi, 2, 2, 1, 2, True))
    cmp(m._t_pool(xi, 2, 3, 2, 1, 1, False, False, True), F.avg_pool2d(xi, 3, 2, 1))
    cmp(m._t_pool(xi, 2, 3, 2, 1, 1, True, False, False), F.avg_pool2d(xi, 3, 2, 1, True, False))
    cmp(m._t_pool(xi, 2, (5, 3), adaptive=True, is_max=False), F.adaptive_avg_pool2d(xi, (5, 3)))
    cmp(m._t_pool(x1, 1, 4, 3, 1, 1, False, True), F.max_pool1d(x1, 4, 3, 1))
    cmp(m._t_pool(x3, 3, 2, 2, 0, 1, False, False), F.avg_pool3d(x3, 2, 2))
    ln_w, ln_b = torch.randn(11, 13), torch.randn(11, 13)
    cmp(m._t_norm("layer", xi, ln_w, ln_b, 1e-5, 2), F.layer_norm(xi, (11, 13), ln_w, ln_b))
    gw, gb = torch.randn(6), torch.randn(6)
    cmp(m._t_norm("group", xi, gw, gb, 1e-5, groups=3), F.group_norm(xi, 3, gw, gb))
    cmp(m._t_norm("instance", xi, None, None, 1e-5), F.instance_norm(xi))
    rm, rv = torch.randn(6), torch.rand(6) + 0.5
    cmp(m._t_batchnorm(xi, rm, rv, gw, gb, 1e-5), F.batch_norm(xi, rm, rv, gw, gb, False))
    logits, tgt = torch.randn(37, 10), torch.randint(0, 10, (37,))
    v, ok = m._t_rows("ce", logits, t=tgt, p1=-100)
    cmp(m._t_sum(v, ok.sum().item()), F.cross_entropy(logits, tgt))
    p_, q_ = torch.randn(37, 50), torch.randn(37, 50)
    cmp(m._t_rowwise("cos", p_, q_, 1, 1e-8), F.cosine_similarity(p_, q_, 1))
    n_ = torch.randn(37, 50)
    v, _ = m._t_rows("triplet", p_, q_, n_, p1=1.0, p2=1e-6)
    cmp(m._t_sum(v, 37), F.triplet_margin_loss(p_, q_, n_))
    cmp(m._t_sum(m._t_nary("smooth_l1", p_, q_, None, 1.0), p_.numel()), F.smooth_l1_loss(p_, q_))
    pr, tg = torch.softmax(p_, 1), torch.softmax(q_, 1)
    cmp(m._t_sum(m._t_nary("kl", torch.log(pr), tg), 37), F.kl_div(torch.log(pr), tg, reduction="batchmean"))
    lstm = torch.nn.LSTM(12, 20, 2, batch_first=True, bidirectional=True)
    xs = torch.randn(3, 7, 12)
    with torch.no_grad():
        want = lstm(xs)
        got = m._t_rnn(2, xs, None, [p for p in lstm._flat_weights], 2, 2, True, True)
    cmp(got[0], want[0])
    cmp(got[1][0], want[1][0])
    cmp(got[1][1], want[1][1])
    gru = torch.nn.GRU(12, 20, 1)
    with torch.no_grad():
        want = gru(xs)
        got = m._t_rnn(3, xs, None, list(gru._flat_weights), 1, 1, False, True)
    cmp(got[0], want[0])
    cmp(got[1], want[1])
    cell = torch.nn.LSTMCell(12, 20)
    with torch.no_grad():
        hh = (torch.randn(3, 20), torch.randn(3, 20))
        want = cell(xs[:, 0], hh)
        got = m._t_cell(2, xs[:, 0], hh, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)
    cmp(got[0], want[0])
    A, B = torch.rand(2, 3, 5, 7), torch.rand(7, 4)
    cmp(m._t_einsum("bijl,lk->bijk", A, B), torch.einsum("bijl,lk->bijk", A, B))
    C = torch.rand(2, 7, 6)
    cmp(m._t_einsum("bik,bkj->bij", A[:, 0], C), torch.einsum("bik,bkj->bij", A[:, 0], C))
    long = torch.rand(3, 700) * 1.5 + 0.25
    long[0, 5] = -long[0, 5]
    cmp(m._t_scan(long, 1, True), long.cumprod(1), 1e-4 * float(long.cumprod(1).abs().max()) + 1e-6)
    cmp(m._t_reduce("prod", long[:, :40], 1), long[:, :40].prod(1), 1e-4 * float(long[:, :40].prod(1).abs().max()))


def test_the_gpu_and_interpreter_renders_differ_only_in_launch_sizes():
    gpu, interp = tlib.render_all("gpu"), tlib.render_all("interpreter")
    assert "BLOCK=1024, num_warps=4" in gpu and "triton.next_power_of_2" in interp
    assert gpu.count("@triton.jit") == interp.count("@triton.jit")


def test_interpreter_launches_over_a_small_tensor_take_a_tile_of_its_size(m, monkeypatch):
    """In the interpreter every op runs over the whole tile, masked lanes included: an elementwise
    op, a pooling or a full sum over a small tensor takes a block of at most its size rounded up to
    a power of two (not the 262144-wide tile a large tensor takes)."""
    blocks: dict[str, list[int]] = {}

    class Spy:
        def __init__(self, name, kernel):
            self.name, self.kernel = name, kernel

        def __getitem__(self, grid):
            def launch(*args, **kw):
                blocks.setdefault(self.name, []).append(kw["BLOCK"])
                return self.kernel[grid](*args, **kw)
            return launch

    for name in ("_tl_unary_kernel", "_tl_nary_kernel", "_tl_pool", "_tl_partial"):
        monkeypatch.setattr(m, name, Spy(name, getattr(m, name)))
    x = torch.randn(2, 3, 6, 5)  # 180 elements
    cmp(m._t_unary("relu", x), torch.relu(x))
    cmp(m._t_nary("add", x, x[:, :1]), x + x[:, :1])
    cmp(m._t_pool(x, 2, 2), F.max_pool2d(x, 2))
    cmp(m._t_sum(x), x.sum(), 1e-3)
    assert set(blocks) == {"_tl_unary_kernel", "_tl_nary_kernel", "_tl_pool", "_tl_partial"}, blocks
    assert all(b <= 256 for bs in blocks.values() for b in bs), blocks
    big = torch.randn(600_000)
    cmp(m._t_unary("relu", big), torch.relu(big))
    assert blocks["_tl_unary_kernel"][-1] == 262144  # a large tensor still takes the large tile


def test_the_rewriters_lists_are_what_the_dispatcher_handles():
    for kind in generic.MODULES:
        assert f'"{kind}"' in tlib.DISPATCH, kind
    for name in generic.FUNCTIONS:
        assert f'"{name}"' in tlib.DISPATCH, name


def test_unsupported_arguments_raise_instead_of_running_pytorch(m):
    with pytest.raises(m._Unsupported):
        m._t_fn("cross_entropy", torch.randn(4, 3), torch.tensor([0, 1, 2, 1]), label_smoothing=0.1)
    with pytest.raises(m._Unsupported):
        m._t_fn("sum", torch.randn(3), dtype=torch.float64)
    with pytest.raises(m._Unsupported):
        m._t_mod(torch.nn.MultiheadAttention(8, 2), torch.randn(2, 3, 8))
    assert m._t_op("mul", 3, 4) == 12 and m._t_op("gt", 2, 1) is True  # sizes and flags stay Python


class _Counted:
    """A kernel's launches counted (kernel[grid](...) passes through)."""

    def __init__(self, kernel):
        self.kernel, self.n = kernel, 0

    def __getitem__(self, grid):
        self.n += 1
        return self.kernel[grid]


@pytest.mark.parametrize("profile", ["interpreter", "gpu"])
def test_products_with_a_side_of_one_or_a_long_k_take_their_own_kernels(profile, tmp_path, monkeypatch):
    """A matrix-vector product (N or M of 1, with and without bias, batched) runs the streaming
    kernel, not a tl.dot tile that is mostly empty; few output tiles over a long K split K over
    programs and sum the slices; a product of many tiles takes the plain kernel. Each matches
    PyTorch, with the launch sizes of both renders (the GPU's literals run in the interpreter)."""
    name = f"wb_tlib_{profile}_products"
    path = tmp_path / f"{name}.py"
    path.write_text("import torch\nimport triton\nimport triton.language as tl\n" + tlib.render_all(profile))
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, m)
    spec.loader.exec_module(m)
    kernels = {k: _Counted(getattr(m, k)) for k in ("_tl_mv", "_tl_mm_split", "_tl_split_sum", "_tl_mm")}
    for k, wrapped in kernels.items():
        monkeypatch.setattr(m, k, wrapped)

    def launches(fn, want, tol=1e-4):
        before = {k: c.n for k, c in kernels.items()}
        got = fn()
        cmp(got, want, tol * (1 + float(want.abs().max())))
        return {k: c.n - before[k] for k, c in kernels.items() if c.n != before[k]}

    torch.manual_seed(0)
    a, v = torch.randn(37, 3000), torch.randn(3000, 1)
    assert launches(lambda: m._t_matmul(a, v), a @ v) == {"_tl_mv": 1}
    assert launches(lambda: m._t_matmul(v.t(), a.t()), v.t() @ a.t()) == {"_tl_mv": 1}
    assert launches(lambda: m._t_matmul(a, v[:, 0]), a @ v[:, 0]) == {"_tl_mv": 1}
    x, w, b = torch.randn(1, 3000), torch.randn(29, 3000), torch.randn(29)
    assert launches(lambda: m._t_linear(x, w, b), F.linear(x, w, b)) == {"_tl_mv": 1}
    xs, w1, b1 = torch.randn(5, 3000), torch.randn(1, 3000), torch.randn(1)
    assert launches(lambda: m._t_linear(xs, w1, b1), F.linear(xs, w1, b1)) == {"_tl_mv": 1}
    bm, bv = torch.randn(2, 37, 3000), torch.randn(2, 3000, 1)
    assert launches(lambda: m._t_matmul(bm, bv), bm @ bv) == {"_tl_mv": 1}
    long_k = 16384 + 700   # past _SPLIT_MIN_STEPS blocks of K in both renders
    a, bb, bl = torch.randn(20, long_k), torch.randn(long_k, 24), torch.randn(24)
    split = {"_tl_mm_split": 1, "_tl_split_sum": 1}
    assert launches(lambda: m._t_matmul(a, bb), a @ bb) == split
    assert launches(lambda: m._t_linear(a, bb.t(), bl), F.linear(a, bb.t(), bl)) == split
    a3, b3 = torch.randn(3, 20, long_k), torch.randn(3, long_k, 24)
    assert launches(lambda: m._t_matmul(a3, b3), a3 @ b3) == split
    ah, bh = a.half(), bb.half()
    assert launches(lambda: m._t_matmul(ah, bh), (ah.float() @ bh.float()).half(), 1e-2) == split
    wide, tall = torch.randn(64 * 9, 40), torch.randn(40, 64 * 8)   # a short K: no split
    assert launches(lambda: m._t_matmul(wide, tall), wide @ tall) == {"_tl_mm": 1}
