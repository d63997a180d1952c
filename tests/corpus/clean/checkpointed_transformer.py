"""Activation checkpointing (torch.utils.checkpoint, non-reentrant) and
saved-tensor offload (save_on_cpu) in a small transformer training loop."""
import os

import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d, nhead=4, dim_feedforward=4 * d, batch_first=True)

    def forward(self, x):
        return checkpoint(self.layer, x, use_reentrant=False)


def main():
    torch.manual_seed(0)
    d = 64
    model = nn.Sequential(*[Block(d) for _ in range(3)], nn.Linear(d, 10)).to(DEVICE)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    losses = []
    for step in range(12):
        x = torch.randn(8, 32, d, device=DEVICE)
        y = torch.randint(0, 10, (8, 32), device=DEVICE)
        if step % 2:
            with torch.autograd.graph.save_on_cpu(pin_memory=DEVICE.type == "cuda"):
                out = model(x)
        else:
            out = model(x)
        loss = nn.functional.cross_entropy(out.reshape(-1, 10), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    print("loss %.3f -> %.3f" % (losses[0], losses[-1]))


if __name__ == "__main__":
    main()
