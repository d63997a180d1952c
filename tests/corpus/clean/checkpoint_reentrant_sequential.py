"""Reentrant activation checkpointing, the older API many codebases still
use: checkpoint_sequential(..., use_reentrant=True) over a deep residual
MLP in 4 segments (the input made to require grad, as reentrant
checkpointing needs), checkpoint(use_reentrant=True) around a custom block
with a dropout whose RNG state is restored for the recompute, gradients
checked against the uncheckpointed model once."""
import copy
import os

import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint, checkpoint_sequential

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


class Residual(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, dim)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return x + self.drop(torch.relu(self.fc(self.norm(x))))


def forward(trunk, head, x, use_checkpoint):
    if use_checkpoint:
        h = checkpoint_sequential(trunk, 4, x.requires_grad_(), use_reentrant=True)
        return checkpoint(head, h, use_reentrant=True)
    return head(trunk(x))


def main():
    torch.manual_seed(0)
    trunk = nn.Sequential(*[Residual(256) for _ in range(12)]).to(DEVICE)
    head = nn.Sequential(Residual(256), nn.LayerNorm(256), nn.Linear(256, 10)).to(DEVICE)
    x, y = torch.randn(64, 256, device=DEVICE), torch.randint(0, 10, (64,), device=DEVICE)
    trunk.eval(), head.eval()  # no dropout for the gradient check
    plain_trunk, plain_head = copy.deepcopy(trunk), copy.deepcopy(head)
    nn.functional.cross_entropy(forward(trunk, head, x.clone(), True), y).backward()
    nn.functional.cross_entropy(forward(plain_trunk, plain_head, x.clone(), False), y).backward()
    for a, b in zip(trunk.parameters(), plain_trunk.parameters()):
        torch.testing.assert_close(a.grad, b.grad)
    del plain_trunk, plain_head
    trunk.train(), head.train()
    params = list(trunk.parameters()) + list(head.parameters())
    opt = torch.optim.AdamW(params, lr=1e-3)
    for step in range(12):
        x, y = torch.randn(64, 256, device=DEVICE), torch.randint(0, 10, (64,), device=DEVICE)
        loss = nn.functional.cross_entropy(forward(trunk, head, x, True), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("loss", round(loss.item(), 3))


if __name__ == "__main__":
    main()
