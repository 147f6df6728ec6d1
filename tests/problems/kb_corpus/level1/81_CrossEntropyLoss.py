import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Cross-entropy of class logits against integer labels (mean over the batch).
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """
        Args:
            predictions (torch.Tensor): Logits, shape (batch_size, num_classes).
            targets (torch.Tensor): int64 labels in [0, num_classes), shape (batch_size,).

        Returns:
            torch.Tensor: A scalar.
        """
        return torch.nn.functional.cross_entropy(predictions, targets)


batch_size = 16384
num_classes = 4096


def get_inputs():
    predictions = torch.randn(batch_size, num_classes)
    targets = torch.randint(0, num_classes, (batch_size,))
    return [predictions, targets]


def get_init_inputs():
    return []
