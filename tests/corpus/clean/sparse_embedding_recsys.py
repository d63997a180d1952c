"""A two-tower recommender with sparse embedding gradients
(nn.Embedding(sparse=True)) trained by SparseAdam for the tables and Adam
for the dense towers, with an in-batch softmax loss."""
import torch
import torch.nn as nn
from _device import DEVICE  # cuda on the GPU half


class Tower(nn.Module):
    def __init__(self, rows, d):
        super().__init__()
        self.table = nn.EmbeddingBag(rows, d, mode="mean", sparse=True)
        self.mlp = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d))

    def forward(self, ids, offsets):
        return nn.functional.normalize(self.mlp(self.table(ids, offsets)), dim=-1)


def main():
    torch.manual_seed(0)
    users, items = Tower(5000, 32).to(DEVICE), Tower(8000, 32).to(DEVICE)
    sparse = [users.table.weight, items.table.weight]
    dense = [p for t in (users, items) for p in t.mlp.parameters()]
    opt_sparse = torch.optim.SparseAdam(sparse, lr=1e-2)
    opt_dense = torch.optim.Adam(dense, lr=1e-3)
    for step in range(12):
        b = 64
        u_ids = torch.randint(0, 5000, (b * 3,), device=DEVICE)
        i_ids = torch.randint(0, 8000, (b * 2,), device=DEVICE)
        u = users(u_ids, torch.arange(0, b * 3, 3, device=DEVICE))
        v = items(i_ids, torch.arange(0, b * 2, 2, device=DEVICE))
        loss = nn.functional.cross_entropy(u @ v.T / 0.1, torch.arange(b, device=DEVICE))
        opt_sparse.zero_grad()
        opt_dense.zero_grad()
        loss.backward()
        opt_sparse.step()
        opt_dense.step()
    print("loss", loss.item())


if __name__ == "__main__":
    main()
