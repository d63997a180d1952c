# memlife-corpus: torchrun
"""DistributedDataParallel over gloo on CPU (NCCL on the GPU half). Launch with
python3 -m torch.distributed.run --standalone --nproc_per_node=2 ddp_gloo.py"""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
from _device import init_distributed


def main():
    device = init_distributed()
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    torch.manual_seed(0)  # same initial weights on every rank (DDP also broadcasts them)

    x = torch.randn(128, 20, device=device)
    y = torch.randint(0, 3, (128,), device=device)
    dataset = TensorDataset(x, y)
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(dataset, batch_size=8, sampler=sampler)

    model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 3)).to(device)
    ddp_model = DDP(model)
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    sampler.set_epoch(0)
    for step, (xb, yb) in enumerate(loader):
        if step == 8:
            break
        optimizer.zero_grad()
        loss = loss_fn(ddp_model(xb), yb)
        loss.backward()
        optimizer.step()
        if rank == 0:
            print(f"step {step} loss {loss.item():.4f}")

    # average the final loss across ranks for a report
    final = loss.detach().clone()
    dist.all_reduce(final, op=dist.ReduceOp.SUM)
    if rank == 0:
        print(f"mean final loss {final.item() / world_size:.4f} (local_rank={os.environ.get('LOCAL_RANK')})")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
