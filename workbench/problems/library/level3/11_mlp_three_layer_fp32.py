"""Three-layer MLP, fp32: x (4096, 1024) -> Linear(1024, 2048) -> ReLU -> Linear(2048, 2048) -> ReLU
-> Linear(2048, 512); returns (4096, 512). Three dependent GEMMs with bias/ReLU epilogues.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "mlp"
DTYPE = "fp32"
TAGS = ('matmul', 'fused', 'block')

BATCH, IN, HIDDEN, OUT = 4096, 1024, 2048, 512
CPU_SIZES = {"BATCH": 37, "IN": 29, "HIDDEN": 45, "OUT": 19}


def flops():
    return 2 * BATCH * (IN * HIDDEN + HIDDEN * HIDDEN + HIDDEN * OUT) + BATCH * (4 * HIDDEN + OUT)


def bytes_moved():
    return (BATCH * IN + BATCH * OUT + IN * HIDDEN + HIDDEN * HIDDEN + HIDDEN * OUT + 2 * HIDDEN + OUT) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(IN, HIDDEN)
        self.fc2 = nn.Linear(HIDDEN, HIDDEN)
        self.fc3 = nn.Linear(HIDDEN, OUT)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


def get_inputs():
    return [torch.randn(BATCH, IN)]


def get_init_inputs():
    return []
