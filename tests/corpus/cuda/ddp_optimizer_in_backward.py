"""The distributed form of the optimizer step in backward that TorchRec
uses: torch.distributed.optim._apply_optimizer_in_backward registers an
Adagrad per parameter and DDP steps each as its gradient bucket is reduced
(its optimizer-overlap comm hook, which needs CUDA), NCCL, one rank per GPU;
the model lives for the whole program."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.optim import _apply_optimizer_in_backward
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 16)).to(device)
    _apply_optimizer_in_backward(torch.optim.Adagrad, model.parameters(), {"lr": 0.05})
    ddp = DDP(model, device_ids=[device.index])
    for step in range(10):
        x = torch.randn(64, 256, device=device)
        y = torch.randint(0, 16, (64,), device=device)
        loss = nn.functional.cross_entropy(ddp(x), y)
        loss.backward()  # the optimizers step here, per parameter
        if dist.get_rank() == 0 and step % 3 == 0:
            print(step, round(loss.item(), 4))
    torch.cuda.synchronize()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
