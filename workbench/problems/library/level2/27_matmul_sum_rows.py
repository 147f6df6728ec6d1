"""Linear layer then a sum over its outputs, fp32: y = (x @ W^T + b).sum(dim=1) with x (8192, 2048),
W (2048, 2048), b (2048,) -> (8192,).

The sum commutes with the linear map: y = x @ W.sum(0) + b.sum(), a matrix-vector product. flops()
counts that minimal arithmetic (the reference's GEMM does 2 * M * N * K), so the roofline floor
holds for a kernel that uses the rewrite.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "matmul-epilogue"
DTYPE = "fp32"
TAGS = ('matmul', 'reduction', 'fused')

M, K, N = 8192, 2048, 2048
CPU_SIZES = {"M": 37, "K": 45, "N": 29}


def flops():
    return 2 * M * K + N * K + N


def bytes_moved():
    return (M * K + N * K + N + M) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(K, N, bias=True)

    def forward(self, x):
        return self.fc(x).sum(dim=1)


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return []
