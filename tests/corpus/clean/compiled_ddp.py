# memlife-corpus: torchrun
"""torch.compile of a DDP model over gloo: Dynamo's DDP optimizer splits the
graph at the buckets so the all-reduces overlap the backward."""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from _device import init_distributed


def main():
    device = init_distributed()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 256), nn.GELU(),
                          nn.Linear(256, 8)).to(device)
    ddp = DDP(model)
    compiled = torch.compile(ddp)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(8):
        x = torch.randn(32, 64, device=device)
        y = torch.randn(32, 8, device=device)
        nn.functional.mse_loss(compiled(x), y).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
