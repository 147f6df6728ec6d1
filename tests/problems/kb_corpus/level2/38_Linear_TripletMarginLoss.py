import torch
import torch.nn as nn


class Model(nn.Module):
    """
    An embedding network shared by anchor, positive and negative, and the triplet margin loss.
    """

    def __init__(self, in_features, embed_dim, margin):
        super(Model, self).__init__()
        self.embed = nn.Sequential(nn.Linear(in_features, embed_dim), nn.ReLU(),
                                   nn.Linear(embed_dim, embed_dim))
        self.loss = nn.TripletMarginLoss(margin=margin)

    def forward(self, anchor, positive, negative):
        return self.loss(self.embed(anchor), self.embed(positive), self.embed(negative))


batch_size = 4096
in_features = 2048
embed_dim = 1024
margin = 1.0


def get_inputs():
    return [torch.randn(batch_size, in_features) for _ in range(3)]


def get_init_inputs():
    return [in_features, embed_dim, margin]
