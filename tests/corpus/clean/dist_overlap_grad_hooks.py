# memlife-corpus: torchrun
"""Communication overlapped with backward by hand: a post-accumulate-grad
hook issues an async all_reduce for each parameter as its gradient is
ready; the works are waited before the optimizer step. Also polls
is_completed() and gathers a Python metric with all_gather_object."""

import torch
import torch.distributed as dist
import torch.nn as nn

from _device import init_distributed


def main():
    device = init_distributed()
    world = dist.get_world_size()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(24, 48), nn.ReLU(), nn.Linear(48, 48), nn.ReLU(), nn.Linear(48, 4)).to(device)
    works = []

    def reduce_when_ready(p):
        works.append(dist.all_reduce(p.grad, async_op=True))

    for p in model.parameters():
        p.register_post_accumulate_grad_hook(reduce_when_ready)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for step in range(10):
        x = torch.randn(8, 24, device=device)
        y = torch.randint(0, 4, (8,), device=device)
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        while not all(w.is_completed() for w in works):
            pass
        for w in works:
            w.wait()
        works.clear()
        for p in model.parameters():
            p.grad.div_(world)
        opt.step()
        losses.append(loss.item())
    gathered = [None] * world
    dist.all_gather_object(gathered, {"rank": dist.get_rank(), "last_loss": losses[-1]})
    if dist.get_rank() == 0:
        print(gathered)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
