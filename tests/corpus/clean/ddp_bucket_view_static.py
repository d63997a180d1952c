# memlife-corpus: torchrun
"""DDP over gloo with gradients as views of its all-reduce buckets
(gradient_as_bucket_view) and a static graph, grads zeroed in place, grad
clipping and a learning-rate warm-up, as large-model recipes set it."""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from _device import init_distributed


def main():
    device = init_distributed()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                          nn.Linear(128, 10)).to(device)
    ddp = DDP(model, gradient_as_bucket_view=True, static_graph=True, bucket_cap_mb=1)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    sched = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=4)
    for step in range(10):
        x = torch.randn(32, 64, device=device)
        y = torch.randint(0, 10, (32,), device=device)
        loss = nn.functional.cross_entropy(ddp(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(ddp.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=False)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
