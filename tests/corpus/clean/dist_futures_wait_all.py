# memlife-corpus: torchrun
"""Gradient all-reduce by hand over gloo, waited through futures: one async
all_reduce per gradient, torch.futures.wait_all on their futures before the
optimizer step (the pattern of hand-written data parallelism)."""

import torch
import torch.distributed as dist
import torch.nn as nn

from _device import init_distributed


def main():
    device = init_distributed()
    world = dist.get_world_size()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(24, 48), nn.ReLU(), nn.Linear(48, 4)).to(device)
    for p in model.parameters():
        dist.broadcast(p.data, src=0)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(10):
        x = torch.randn(8, 24, device=device)
        y = torch.randint(0, 4, (8,), device=device)
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        futures = [dist.all_reduce(p.grad, async_op=True).get_future() for p in model.parameters()]
        torch.futures.wait_all(futures)
        for p in model.parameters():
            p.grad.div_(world)
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
