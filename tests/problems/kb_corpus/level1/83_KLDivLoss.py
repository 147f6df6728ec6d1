import torch
import torch.nn as nn


class Model(nn.Module):
    """
    KL divergence between two categorical distributions given as probabilities.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """
        Args:
            predictions (torch.Tensor): Probabilities, shape (batch_size, dim), rows sum to 1.
            targets (torch.Tensor): Probabilities, same shape.

        Returns:
            torch.Tensor: KL(targets || predictions), averaged over the batch.
        """
        return torch.nn.functional.kl_div(torch.log(predictions), targets, reduction="batchmean")


batch_size = 4096
dim = 16384


def get_inputs():
    predictions = torch.randn(batch_size, dim).softmax(dim=1)
    targets = torch.randn(batch_size, dim).softmax(dim=1)
    return [predictions, targets]


def get_init_inputs():
    return []
