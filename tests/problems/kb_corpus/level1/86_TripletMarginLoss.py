import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Triplet margin loss over (anchor, positive, negative) embeddings.
    """

    def __init__(self, margin: float = 1.0):
        """
        Args:
            margin (float): Required gap between the positive and negative distances.
        """
        super(Model, self).__init__()
        self.loss_fn = nn.TripletMarginLoss(margin=margin)

    def forward(self, anchor: torch.Tensor, positive: torch.Tensor,
                negative: torch.Tensor) -> torch.Tensor:
        """
        Args:
            anchor (torch.Tensor): Shape (batch_size, dim).
            positive (torch.Tensor): Shape (batch_size, dim).
            negative (torch.Tensor): Shape (batch_size, dim).

        Returns:
            torch.Tensor: A scalar.
        """
        return self.loss_fn(anchor, positive, negative)


batch_size = 4096
dim = 8192


def get_inputs():
    anchor = torch.randn(batch_size, dim)
    positive = torch.randn(batch_size, dim)
    negative = torch.randn(batch_size, dim)
    return [anchor, positive, negative]


def get_init_inputs():
    return [1.0]
