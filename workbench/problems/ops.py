"""ATen op classes: which ops launch a kernel, and what kind of kernel (matmul, norm, ...).

Shared by the problem FLOP/byte counter (`problems.counts`) and the forecasters' reference
profile (`forecast.reference_profile`); names are ATen overload packets, overload stripped.
"""
from __future__ import annotations

#: ATen ops that launch no kernel (views, metadata, allocation without a fill).
_NO_KERNEL = {
    "view", "_unsafe_view", "reshape", "expand", "permute", "t", "transpose", "select", "slice",
    "unsqueeze", "squeeze", "as_strided", "alias", "detach", "empty", "empty_like",
    "empty_strided", "new_empty", "new_empty_strided", "lift_fresh", "_to_copy_noop", "unbind",
    "split", "split_with_sizes", "chunk", "view_as", "lift_fresh_copy", "_reshape_alias",
    "sym_size", "sym_stride", "sym_numel", "size", "stride", "numel", "dim", "is_contiguous",
    "_local_scalar_dense", "item", "unfold", "diagonal", "narrow", "movedim", "flatten",
    "unflatten", "squeeze_", "unsqueeze_", "t_", "transpose_", "resize_", "set_", "_efficientzerotensor",
}
_MATMUL = {"mm", "addmm", "bmm", "baddbmm", "matmul", "linear", "addmv", "mv", "dot", "_addmm_activation",
           "addbmm", "einsum"}
_CONV = {"convolution", "_convolution", "cudnn_convolution", "conv2d", "conv1d", "conv3d",
         "convolution_overrideable", "_convolution_mode", "conv_transpose2d", "mkldnn_convolution"}
_ATTENTION = {"_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
              "_scaled_dot_product_cudnn_attention", "scaled_dot_product_attention",
              "_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_attention_math"}
NORM_OPS = {"native_layer_norm", "native_group_norm", "native_batch_norm", "_native_batch_norm_legit",
            "_native_batch_norm_legit_no_training", "_fused_rms_norm", "rms_norm", "layer_norm",
            "group_norm", "batch_norm", "_batch_norm_impl_index", "cudnn_batch_norm"}
_REDUCE = {"sum", "mean", "amax", "amin", "max", "min", "argmax", "argmin", "_softmax",
           "_log_softmax", "softmax", "log_softmax", "cumsum", "cumprod", "var", "std", "var_mean",
           "std_mean", "norm", "linalg_vector_norm", "logsumexp", "nll_loss_forward", "nll_loss",
           "nll_loss2d_forward", "prod", "any", "all", "topk", "sort", "max_pool2d_with_indices",
           "avg_pool2d", "max_pool2d", "adaptive_avg_pool2d", "_adaptive_avg_pool2d", "mse_loss",
           "cross_entropy_loss", "_fused_moving_avg_obs_fq_helper"}
_GATHER = {"index", "index_select", "embedding", "gather", "scatter", "scatter_add", "index_put",
           "index_put_", "cat", "stack", "copy_", "clone", "_to_copy", "contiguous", "index_add",
           "masked_scatter", "repeat", "flip", "roll", "constant_pad_nd", "tril", "triu",
           "scatter_add_", "index_copy", "_index_put_impl_", "embedding_dense_backward"}
#: Op classes, in feature order.
CLASSES = ("matmul", "conv", "attention", "norm", "reduce", "gather", "elementwise")


def classify_op(name: str) -> str | None:
    """Op class of an ATen op name (overload stripped), or None for an op with no kernel."""
    base = name.rstrip("_") if name not in _NO_KERNEL else name
    if name in _NO_KERNEL or base in _NO_KERNEL:
        return None
    for cls, names in (("matmul", _MATMUL), ("conv", _CONV), ("attention", _ATTENTION),
                       ("norm", NORM_OPS), ("reduce", _REDUCE), ("gather", _GATHER)):
        if name in names or base in names:
            return cls
    return "elementwise"
