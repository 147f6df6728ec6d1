import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    Knowledge distillation: a student head's tempered log-probabilities against a teacher's
    tempered probabilities, KL divergence scaled by T^2.
    """

    def __init__(self, in_features, num_classes, temperature):
        super(Model, self).__init__()
        self.student = nn.Linear(in_features, num_classes)
        self.temperature = temperature

    def forward(self, x: torch.Tensor, teacher_logits: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_features).
            teacher_logits (torch.Tensor): Shape (batch_size, num_classes).

        Returns:
            torch.Tensor: A scalar.
        """
        t = self.temperature
        log_p = F.log_softmax(self.student(x) / t, dim=1)
        q = F.softmax(teacher_logits / t, dim=1)
        return F.kl_div(log_p, q, reduction="batchmean") * t * t


batch_size = 4096
in_features = 1024
num_classes = 8192
temperature = 4.0


def get_inputs():
    return [torch.randn(batch_size, in_features), torch.randn(batch_size, num_classes)]


def get_init_inputs():
    return [in_features, num_classes, temperature]
