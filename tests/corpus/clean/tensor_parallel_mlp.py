# memlife-corpus: torchrun
"""Tensor parallelism with DTensor: an MLP block split column-wise then
row-wise over a 2-rank device mesh (parallelize_module), trained with
AdamW; DTensor issues its collectives as functional collectives, waited
lazily when their result is first used."""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel,
                                               parallelize_module)

from _device import DEVICE, init_distributed


class MLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.up = nn.Linear(d, 4 * d)
        self.down = nn.Linear(4 * d, d)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)))


def main():
    device = init_distributed()
    mesh = init_device_mesh(DEVICE.type, (dist.get_world_size(),))
    torch.manual_seed(0)
    d = 32
    model = nn.Sequential(MLP(d), MLP(d)).to(device)
    for i in range(2):
        parallelize_module(model[i], mesh, {"up": ColwiseParallel(), "down": RowwiseParallel()})
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    for step in range(8):
        torch.manual_seed(100 + step)  # the same batch on every rank
        x = torch.randn(16, d, device=device)
        loss = (model(x) - x).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
