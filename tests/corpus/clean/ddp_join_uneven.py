# memlife-corpus: torchrun
"""DDP with uneven inputs (the DDP tutorial's Join context manager): rank 1
has more batches than rank 0; inside `Join`, the rank that runs out shadows
the other's all-reduces until every rank is done. Gradient accumulation with
no_sync on every other batch."""
import contextlib

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.algorithms.join import Join
from torch.nn.parallel import DistributedDataParallel as DDP

from _device import init_distributed


def main():
    device = init_distributed()
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4)).to(device),
                device_ids=[device.index] if device.type == "cuda" else None)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    batches = 6 + 4 * rank
    with Join([model]):
        for i in range(batches):
            x, y = torch.randn(16, 32, device=device), torch.randint(0, 4, (16,), device=device)
            sync = i % 2 == 1 or i == batches - 1
            with contextlib.nullcontext() if sync else model.no_sync():
                loss = nn.functional.cross_entropy(model(x), y)
                loss.backward()
            if sync:
                opt.step()
                opt.zero_grad()
            print(rank, i, round(loss.item(), 4))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
