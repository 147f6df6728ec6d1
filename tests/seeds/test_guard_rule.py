"""The static guard's rule for re-running PyTorch, as seeds meet it: everything ModelNew's forward
runs in the file counts (a helper or an inherited forward hides nothing), and a library GEMM or
convolution beside the candidate's own Triton kernels is what torch.compile's output does, so it
does not count when the reference does more than that library op."""
from __future__ import annotations

from workbench.execution.guards import static_findings

HEADER = "import torch\nimport torch.nn as nn\nimport triton\nimport triton.language as tl\n"
KERNEL = '''
@triton.jit
def _scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)
'''
MATMUL_SCALE = HEADER + '''
class Model(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b) * 2.0
'''
MATMUL_ONLY = HEADER + '''
class Model(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)
'''
SOFTMAX = HEADER + '''
class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=1)
'''


def _flagged(candidate: str, reference: str) -> bool:
    return any("re-runs PyTorch" in f for f in static_findings(candidate, reference))


def test_a_helper_function_does_not_hide_the_reference_ops():
    cheat = HEADER + '''
def _helper(x):
    return torch.softmax(x, dim=1)

class ModelNew(nn.Module):
    def forward(self, x):
        return _helper(x)
'''
    assert _flagged(cheat, SOFTMAX)


def test_an_inherited_forward_does_not_hide_the_reference_ops():
    cheat = SOFTMAX.replace("class Model(", "class _Copy(") + "\nclass ModelNew(_Copy):\n    pass\n"
    assert _flagged(cheat, SOFTMAX)


def test_a_library_gemm_beside_a_triton_epilogue_is_allowed_as_torch_compile_does():
    # Inductor's output for matmul(a, b) * 2: cuBLAS for the product, a Triton kernel for the rest.
    seed = HEADER + KERNEL + '''
def call(args):
    a, b = args
    buf = torch.empty((a.shape[0], b.shape[1]), device=a.device, dtype=a.dtype)
    torch.mm(a, b, out=buf)
    out = torch.empty_like(buf)
    _scale[(triton.cdiv(buf.numel(), 1024),)](buf, out, buf.numel(), BLOCK=1024)
    return (out,)

class ModelNew(nn.Module):
    def forward(self, a, b):
        return call([a, b])[0]
'''
    assert not _flagged(seed, MATMUL_SCALE)
    # The same file without its kernel launch re-runs the reference.
    assert _flagged(seed.replace("    _scale[(triton.cdiv(buf.numel(), 1024),)](buf, out, buf.numel(), BLOCK=1024)\n",
                                 "    out = torch.matmul(a, b)\n"), MATMUL_SCALE)


def test_a_reference_that_is_only_a_library_op_must_be_done_by_the_candidates_kernels():
    # torch.mm plus an unrelated Triton copy would re-run a plain matmul: flagged.
    cheat = HEADER + KERNEL + '''
class ModelNew(nn.Module):
    def forward(self, a, b):
        c = torch.mm(a, b)
        out = torch.empty_like(c)
        _scale[(1,)](c, out, 0, BLOCK=16)
        return c
'''
    assert _flagged(cheat, MATMUL_ONLY)
