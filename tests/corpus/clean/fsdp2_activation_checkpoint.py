# memlife-corpus: torchrun
"""FSDP2 as TorchTitan-style code composes it: activation checkpointing
(checkpoint_wrapper) on each transformer block, fully_shard per block and at
the root with reshard_after_forward=False for the root, gradient clipping
over the sharded parameters, 2 ranks on gloo (NCCL on the GPU half)."""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed._composable.fsdp import fully_shard
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper
from _device import init_distributed


class Block(nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, 4, batch_first=True)
        self.mlp = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, x):
        x = x + self.attn(x, x, x, need_weights=False)[0]
        return x + self.mlp(x)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(checkpoint_wrapper(Block()) for _ in range(3))
        self.head = nn.Linear(64, 8)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def main():
    device = init_distributed()
    torch.manual_seed(0)
    model = Model().to(device)
    for block in model.blocks:
        fully_shard(block)
    fully_shard(model, reshard_after_forward=False)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(6):
        loss = model(torch.randn(4, 12, 64, device=device)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if dist.get_rank() == 0:
            print(step, round(loss.item(), 4))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
