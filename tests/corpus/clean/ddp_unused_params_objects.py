# memlife-corpus: torchrun
"""DDP with find_unused_parameters (a branch skipped on odd steps),
broadcast_object_list for a config, and a metric reduced with a
synchronous all_reduce at the end of each epoch."""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from _device import init_distributed


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(16, 32)
        self.head_a = nn.Linear(32, 4)
        self.head_b = nn.Linear(32, 4)

    def forward(self, x, use_b):
        h = torch.relu(self.body(x))
        return self.head_b(h) if use_b else self.head_a(h)


def main():
    device = init_distributed()
    config = [{"lr": 0.05, "epochs": 2}] if dist.get_rank() == 0 else [None]
    dist.broadcast_object_list(config, src=0)
    torch.manual_seed(0)
    model = DDP(TwoHeads().to(device), find_unused_parameters=True)
    opt = torch.optim.SGD(model.parameters(), lr=config[0]["lr"])
    for epoch in range(config[0]["epochs"]):
        total = torch.zeros(1, device=device)
        for step in range(6):
            x = torch.randn(8, 16, device=device)
            y = torch.randint(0, 4, (8,), device=device)
            loss = nn.functional.cross_entropy(model(x, use_b=step % 2 == 1), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.detach()
        dist.all_reduce(total)
        if dist.get_rank() == 0:
            print("epoch", epoch, float(total) / dist.get_world_size())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
