import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Nearest-centroid assignment (a k-means step): squared distances to learned centroids
    through a matmul, then the argmin over centroids.
    """

    def __init__(self, num_centroids, dim):
        super(Model, self).__init__()
        self.centroids = nn.Parameter(torch.randn(num_centroids, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Points, shape (num_points, dim).

        Returns:
            torch.Tensor: int64 index of the nearest centroid, shape (num_points,).
        """
        cross = torch.matmul(x, self.centroids.T)
        dist = (x * x).sum(dim=1, keepdim=True) - 2 * cross + (self.centroids ** 2).sum(dim=1)
        return torch.argmin(dist, dim=1)


num_points = 65536
num_centroids = 1024
dim = 256


def get_inputs():
    return [torch.randn(num_points, dim)]


def get_init_inputs():
    return [num_centroids, dim]
