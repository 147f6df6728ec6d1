import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A linear SVM: scores from a linear layer and the hinge loss against +1/-1 labels.
    """

    def __init__(self, in_features, num_tasks):
        super(Model, self).__init__()
        self.svm = nn.Linear(in_features, num_tasks)

    def forward(self, x, targets):
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_features).
            targets (torch.Tensor): +1 or -1, shape (batch_size, num_tasks).

        Returns:
            torch.Tensor: A scalar.
        """
        scores = self.svm(x)
        return torch.mean(torch.clamp(1 - scores * targets, min=0))


batch_size = 8192
in_features = 4096
num_tasks = 512


def get_inputs():
    targets = torch.randint(0, 2, (batch_size, num_tasks)).float() * 2 - 1
    return [torch.randn(batch_size, in_features), targets]


def get_init_inputs():
    return [in_features, num_tasks]
