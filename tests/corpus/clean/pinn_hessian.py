"""A physics-informed network for the 1-D Poisson equation u'' = f: the
residual needs the network's second derivative with respect to its input,
taken per point with torch.func (vmap of hessian of a functional_call), and
the boundary loss beside it."""
import math
import os

import torch
import torch.nn as nn
from torch.func import functional_call, hessian, vmap

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1)).to(DEVICE)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)

    def u(params, x):  # x: (1,)
        return functional_call(net, params, (x,)).squeeze()

    for step in range(15):
        params = dict(net.named_parameters())
        x = torch.rand(64, 1, device=DEVICE)
        u_xx = vmap(hessian(u, argnums=1), in_dims=(None, 0))(params, x).reshape(-1)
        f = -(math.pi ** 2) * torch.sin(math.pi * x).reshape(-1)
        boundary = net(torch.tensor([[0.0], [1.0]], device=DEVICE)).pow(2).mean()
        loss = (u_xx - f).pow(2).mean() + boundary
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 5 == 0:
            print(step, round(loss.item(), 4))


if __name__ == "__main__":
    main()
