# memlife-corpus: torchrun
"""DDP over gloo with an fp16-compression communication hook and gradient
accumulation under no_sync(), as large-batch training does."""

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel as DDP

from _device import init_distributed


def main():
    device = init_distributed()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 8)).to(device)
    ddp = DDP(model)
    ddp.register_comm_hook(state=None, hook=default_hooks.fp16_compress_hook)
    opt = torch.optim.Adam(ddp.parameters(), lr=1e-3)
    accum = 3
    for step in range(8):
        for micro in range(accum):
            x = torch.randn(16, 32, device=device)
            y = torch.randn(16, 8, device=device)
            if micro < accum - 1:
                with ddp.no_sync():
                    nn.functional.mse_loss(ddp(x), y).backward()
            else:
                nn.functional.mse_loss(ddp(x), y).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
