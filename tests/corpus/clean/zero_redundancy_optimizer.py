# memlife-corpus: torchrun
"""DDP with ZeroRedundancyOptimizer (optimizer state sharded across ranks,
parameters as views of flat per-rank buckets), its state consolidated on
rank 0 for a checkpoint every few steps."""
import io

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.optim import ZeroRedundancyOptimizer
from torch.nn.parallel import DistributedDataParallel as DDP

from _device import init_distributed


def main():
    device = init_distributed()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(48, 96), nn.Tanh(), nn.Linear(96, 96), nn.Tanh(),
                          nn.Linear(96, 6)).to(device)
    ddp = DDP(model)
    opt = ZeroRedundancyOptimizer(ddp.parameters(), optimizer_class=torch.optim.AdamW, lr=1e-3,
                                  parameters_as_bucket_view=True)
    saved = 0
    for step in range(9):
        x = torch.randn(16, 48, device=device)
        y = torch.randint(0, 6, (16,), device=device)
        nn.functional.cross_entropy(ddp(x), y).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % 4 == 3:
            opt.consolidate_state_dict(to=0)
            if dist.get_rank() == 0:
                buf = io.BytesIO()
                torch.save({"model": model.state_dict(), "opt": opt.state_dict()}, buf)
                saved += len(buf.getvalue())
    dist.barrier()
    if dist.get_rank() == 0:
        print("checkpoint bytes", saved)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
