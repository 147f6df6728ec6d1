import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    Two projection towers and a cosine-similarity loss between their outputs.
    """

    def __init__(self, query_dim, doc_dim, embed_dim):
        super(Model, self).__init__()
        self.query_proj = nn.Linear(query_dim, embed_dim)
        self.doc_proj = nn.Linear(doc_dim, embed_dim)

    def forward(self, queries, docs):
        q = self.query_proj(queries)
        d = self.doc_proj(docs)
        return torch.mean(1 - F.cosine_similarity(q, d, dim=1))


batch_size = 8192
query_dim = 1024
doc_dim = 2048
embed_dim = 1024


def get_inputs():
    return [torch.randn(batch_size, query_dim), torch.randn(batch_size, doc_dim)]


def get_init_inputs():
    return [query_dim, doc_dim, embed_dim]
