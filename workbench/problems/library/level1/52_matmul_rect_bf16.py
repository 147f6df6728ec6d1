"""Rectangular bf16 matrix product with a long inner dimension: C = A @ B, A (4096, 8192),
B (8192, 2048), C (4096, 2048) bf16, fp32 accumulation. 512 output tiles of 128x128 (under 4 per SM of an
H100), each with an 8192-long K loop: few tiles for a long K, where split-K can help.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "matmul"
DTYPE = "bf16"
TAGS = ('matmul', 'compute-bound', 'split-k')

M, K, N = 4096, 8192, 2048
CPU_SIZES = {"M": 53, "K": 150, "N": 37}


def flops():
    return 2 * M * N * K  # one multiply and one add per (m, n, k)


def bytes_moved():
    return (M * K + K * N + M * N) * 2  # read A and B once, write C once (bf16)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(M, K, dtype=torch.bfloat16), torch.randn(K, N, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
