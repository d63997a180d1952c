# memlife-corpus: torchrun
"""DDP training that checkpoints with torch.distributed.checkpoint's
async_save every few steps (the state staged to CPU memory, written by a
background thread while training goes on), each save's future awaited
before the next, as long-running jobs checkpoint."""
import tempfile

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from _device import init_distributed


def main():
    device = init_distributed()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 16)).to(device)
    ddp = DDP(model)
    opt = torch.optim.AdamW(ddp.parameters(), lr=1e-3)
    # async_save's collectives run on a background thread: their own group,
    # as the DCP docs advise, so they never interleave with the training's.
    ckpt_group = dist.new_group(backend="gloo")
    box = [tempfile.mkdtemp() if dist.get_rank() == 0 else None]
    dist.broadcast_object_list(box, src=0)
    pending = None
    for step in range(12):
        x = torch.randn(32, 64, device=device)
        y = torch.randint(0, 16, (32,), device=device)
        nn.functional.cross_entropy(ddp(x), y).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % 4 == 3:
            if pending is not None:
                pending.result()
            state = {"model": model.state_dict(), "opt": opt.state_dict()}
            pending = dcp.async_save(state, checkpoint_id=f"{box[0]}/step{step}",
                                     process_group=ckpt_group)
    if pending is not None:
        pending.result()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
