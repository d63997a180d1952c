# memlife-corpus: torchrun
"""FSDP2 fully_shard over gloo with activation checkpointing, no
resharding after forward on the root, gradient accumulation without
gradient sync on the first micro-batches, and a distributed checkpoint
(torch.distributed.checkpoint) saved and loaded."""
import tempfile

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.nn as nn
from torch.distributed.checkpoint.state_dict import get_model_state_dict, set_model_state_dict
from torch.distributed.fsdp import fully_shard
from torch.utils.checkpoint import checkpoint

from _device import init_distributed


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, x):
        return x + checkpoint(self.ff, x, use_reentrant=False)


def main():
    device = init_distributed()
    torch.manual_seed(0)
    d = 32
    model = nn.Sequential(*[Block(d) for _ in range(3)], nn.Linear(d, 4)).to(device)
    for block in model[:3]:
        fully_shard(block)
    fully_shard(model, reshard_after_forward=False)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    accum = 2
    for step in range(5):
        for micro in range(accum):
            model.set_requires_gradient_sync(micro == accum - 1)
            x = torch.randn(8, d, device=device)
            y = torch.randint(0, 4, (8,), device=device)
            nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        opt.zero_grad()
    with tempfile.TemporaryDirectory() as tmp:
        path = tmp if dist.get_rank() == 0 else None
        box = [path]
        dist.broadcast_object_list(box, src=0)
        dcp.save(get_model_state_dict(model), checkpoint_id=box[0])
        state = get_model_state_dict(model)
        dcp.load(state, checkpoint_id=box[0])
        set_model_state_dict(model, state)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
