"""Selective activation checkpointing (the PyTorch SAC API): checkpoint with
a context_fn from create_selective_checkpoint_contexts whose policy saves
matmul outputs and recomputes the rest, on a stack of MLP blocks, eager and
under torch.compile."""
import functools
import os

import torch
import torch.nn as nn
from torch.utils.checkpoint import CheckpointPolicy, checkpoint, create_selective_checkpoint_contexts

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def policy(ctx, op, *args, **kwargs):
    if op in (torch.ops.aten.mm.default, torch.ops.aten.addmm.default):
        return CheckpointPolicy.MUST_SAVE
    return CheckpointPolicy.PREFER_RECOMPUTE


class Block(nn.Module):
    def __init__(self, d=96):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.up = nn.Linear(d, 4 * d)
        self.down = nn.Linear(4 * d, d)

    def inner(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))

    def forward(self, x):
        return checkpoint(self.inner, x, use_reentrant=False,
                          context_fn=functools.partial(create_selective_checkpoint_contexts, policy))


def main():
    torch.manual_seed(0)
    model = nn.Sequential(*[Block() for _ in range(4)], nn.Linear(96, 10)).to(DEVICE)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    compiled = torch.compile(model)
    for step in range(8):
        net = compiled if step >= 4 else model
        x, y = torch.randn(16, 96, device=DEVICE), torch.randint(0, 10, (16,), device=DEVICE)
        loss = nn.functional.cross_entropy(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(step, round(loss.item(), 4))


if __name__ == "__main__":
    main()
