"""Kernel families: parametric Triton templates, one per problem, rendered to candidate sources.

`get_family("L1/01_softmax")` gives a problem's `Family`; `family_ids()` lists the problems that
have one. See base.py for the contract (points, keys, rendering, neighbourhoods) and each
template module for the design choices its parameters span.
"""
from __future__ import annotations

from workbench.families.base import Family, FamilyError, Param, Point
from workbench.families.elementwise import SPECS as _ELEMENTWISE
from workbench.families.elementwise import family as _elementwise
from workbench.families.matmul import Layer, MatmulSpec, matmul_family
from workbench.families.norm import NormSpec, norm_family
from workbench.families.rows import ReduceSpec, SoftmaxSpec, reduce_family, softmax_family

_L = Layer
_SQ = ((4096, 4096, 4096),)


def _build() -> dict[str, Family]:
    fams = [_elementwise(s) for s in _ELEMENTWISE]
    fams += [
        reduce_family(ReduceSpec("L1/07_sum_rows", "sum", 8192)),
        reduce_family(ReduceSpec("L1/08_max_rows", "max", 8192)),
        softmax_family(SoftmaxSpec("L1/01_softmax", 8192)),
        softmax_family(SoftmaxSpec("L1/11_log_softmax", 8192, log=True)),
        softmax_family(SoftmaxSpec("L2/09_causal_masked_softmax", 1024, scale=0.125, causal=True,
                                   doc="Scaled causal-masked softmax")),
        norm_family(NormSpec("L1/12_layer_norm", "layer", 4096, "ln.weight", "ln.bias", 1e-5)),
        norm_family(NormSpec("L1/13_rms_norm_bf16", "rms", 4096, "weight", None, 1e-6, round_before_weight=True)),
        norm_family(NormSpec("L2/07_residual_rmsnorm_bf16", "rms", 4096, "weight", None, 1e-6, residual=True,
                             round_before_weight=True, doc="Residual add then RMS norm")),
        norm_family(NormSpec("L2/08_residual_layernorm", "layer", 4096, "ln.weight", "ln.bias", 1e-5, residual=True,
                             doc="Residual add then layer norm")),
        norm_family(NormSpec("L2/32_gelu_layernorm", "layer", 2048, "ln.weight", "ln.bias", 1e-5, prologue="gelu",
                             doc="GELU then layer norm")),
        matmul_family(MatmulSpec("L1/14_matmul_square_fp32", "fp32", _SQ, doc="Matmul")),
        matmul_family(MatmulSpec("L1/15_matmul_square_bf16", "bf16", _SQ, doc="Matmul")),
        matmul_family(MatmulSpec("L2/01_linear_bias_relu", "fp32", ((4096, 2048, 2048),), (_L("fc", act="relu"),))),
        matmul_family(MatmulSpec("L2/02_linear_bias_gelu_bf16", "bf16", ((8192, 4096, 4096),),
                                 (_L("fc", act="gelu_tanh"),))),
        matmul_family(MatmulSpec("L2/22_linear_bias_silu_fp16", "fp16", ((4096, 4096, 4096),), (_L("fc", act="silu"),))),
        matmul_family(MatmulSpec("L2/30_linear_bias_hardtanh", "fp32", ((4096, 2048, 2048),),
                                 (_L("fc", act="hardtanh"),))),
        matmul_family(MatmulSpec("L3/02_gated_mlp_swiglu_bf16", "bf16", ((4096, 5632, 2048), (4096, 2048, 5632)),
                                 (_L("w1", bias=False, gate="w3"), _L("w2", bias=False)), doc="Gated (SwiGLU) MLP")),
        matmul_family(MatmulSpec("L3/11_mlp_three_layer_fp32", "fp32",
                                 ((4096, 2048, 1024), (4096, 2048, 2048), (4096, 512, 2048)),
                                 (_L("fc1", act="relu"), _L("fc2", act="relu"), _L("fc3")), doc="Three-layer MLP")),
        matmul_family(MatmulSpec("L3/14_vit_mlp_block_bf16", "bf16", ((8192, 3072, 768), (8192, 768, 3072)),
                                 (_L("fc1", act="gelu_tanh"), _L("fc2", residual=True)), norm="norm",
                                 doc="Pre-norm MLP block with residual")),
        matmul_family(MatmulSpec("L3/16_prenorm_mlp_residual_fp16", "fp16", ((4096, 4096, 1024), (4096, 1024, 4096)),
                                 (_L("fc1", act="gelu_erf"), _L("fc2", residual=True)), norm="norm",
                                 doc="Pre-norm MLP block with residual")),
    ]
    from workbench.families.base import family_table

    return family_table(fams)


FAMILIES: dict[str, Family] = _build()


def family_ids() -> list[str]:
    """Problem ids that have a family, sorted."""
    return sorted(FAMILIES)


def get_family(problem_id: str) -> Family:
    """The family of a problem; FamilyError naming the problems that have one."""
    if problem_id not in FAMILIES:
        raise FamilyError(f"no kernel family for {problem_id!r}; families exist for: {', '.join(family_ids())}")
    return FAMILIES[problem_id]


__all__ = ["FAMILIES", "Family", "FamilyError", "Param", "Point", "family_ids", "get_family"]
