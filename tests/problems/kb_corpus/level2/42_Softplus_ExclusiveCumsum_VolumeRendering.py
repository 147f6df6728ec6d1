import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    Volume rendering weights along rays: densities through softplus, transmittance from the
    exclusive cumulative sum of density times step length, weights = T * (1 - exp(-sigma dt)).
    """

    def __init__(self, step):
        super(Model, self).__init__()
        self.step = step

    def forward(self, raw_density: torch.Tensor) -> torch.Tensor:
        """
        Args:
            raw_density (torch.Tensor): Shape (num_rays, samples_per_ray).

        Returns:
            torch.Tensor: Weights, shape (num_rays, samples_per_ray).
        """
        tau = F.softplus(raw_density) * self.step
        before = torch.cumsum(tau, dim=1) - tau
        return torch.exp(-before) * (1 - torch.exp(-tau))


num_rays = 65536
samples_per_ray = 1024
step = 0.01


def get_inputs():
    return [torch.randn(num_rays, samples_per_ray)]


def get_init_inputs():
    return [step]
