"""A graph convolutional network (Kipf & Welling) on a random graph whose
normalized adjacency is a sparse CSR tensor: each layer multiplies with
torch.sparse.mm, trained full-batch for node classification with a mask."""
import torch
import torch.nn as nn
from _device import DEVICE  # cuda on the GPU half


def normalized_adjacency(n, edges):
    src, dst = edges
    idx = torch.cat([torch.stack([src, dst]), torch.stack([dst, src]),
                     torch.arange(n).repeat(2, 1)], 1)
    vals = torch.ones(idx.size(1))
    adj = torch.sparse_coo_tensor(idx, vals, (n, n)).coalesce()
    deg = torch.sparse.sum(adj, 1).to_dense()
    norm = deg.pow(-0.5)
    i = adj.indices()
    v = norm[i[0]] * adj.values() * norm[i[1]]
    return torch.sparse_coo_tensor(i, v, (n, n)).to_sparse_csr()


class GCN(nn.Module):
    def __init__(self, d_in, d_hidden, classes):
        super().__init__()
        self.l1 = nn.Linear(d_in, d_hidden)
        self.l2 = nn.Linear(d_hidden, classes)

    def forward(self, adj, x):
        h = torch.relu(torch.sparse.mm(adj, self.l1(x)))
        return torch.sparse.mm(adj, self.l2(h))


def main():
    torch.manual_seed(0)
    n = 300
    edges = torch.randint(0, n, (2, 1200))
    adj = normalized_adjacency(n, edges).to(DEVICE)
    x = torch.randn(n, 24, device=DEVICE)
    y = torch.randint(0, 4, (n,), device=DEVICE)
    train = torch.rand(n, device=DEVICE) < 0.3
    model = GCN(24, 32, 4).to(DEVICE)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=5e-4)
    for epoch in range(20):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(adj, x)[train], y[train])
        loss.backward()
        opt.step()
        if epoch % 5 == 0:
            print(epoch, round(loss.item(), 4))


if __name__ == "__main__":
    main()
