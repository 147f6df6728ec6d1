import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A classifier head and its loss: linear layer to class logits, cross-entropy against labels.
    """

    def __init__(self, in_features, num_classes):
        super(Model, self).__init__()
        self.head = nn.Linear(in_features, num_classes)
        self.loss = nn.CrossEntropyLoss()

    def forward(self, x, targets):
        """
        Args:
            x (torch.Tensor): Features, shape (batch_size, in_features).
            targets (torch.Tensor): int64 labels, shape (batch_size,).

        Returns:
            torch.Tensor: A scalar.
        """
        return self.loss(self.head(x), targets)


batch_size = 4096
in_features = 1024
num_classes = 8192


def get_inputs():
    return [torch.randn(batch_size, in_features), torch.randint(0, num_classes, (batch_size,))]


def get_init_inputs():
    return [in_features, num_classes]
