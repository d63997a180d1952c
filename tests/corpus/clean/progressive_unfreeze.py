"""Gradual unfreezing (ULMFiT-style fine-tuning): the classifier head trains
first, then every few steps one more encoder layer is unfrozen and its
parameters join the optimizer through add_param_group, so the optimizer's
state grows in steps until the whole model trains; discriminative learning
rates per group."""
import os

import torch
import torch.nn as nn

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    encoder = nn.ModuleList(nn.Sequential(nn.Linear(64, 64), nn.GELU()) for _ in range(3)).to(DEVICE)
    head = nn.Linear(64, 6).to(DEVICE)
    for p in encoder.parameters():
        p.requires_grad_(False)
    opt = torch.optim.AdamW(head.parameters(), lr=1e-3)
    to_unfreeze = list(reversed(encoder))
    for step in range(18):
        if step and step % 3 == 0 and to_unfreeze:
            layer = to_unfreeze.pop(0)
            for p in layer.parameters():
                p.requires_grad_(True)
            opt.add_param_group({"params": list(layer.parameters()), "lr": 1e-3 / (2.6 ** (3 - len(to_unfreeze)))})
        x, y = torch.randn(32, 64, device=DEVICE), torch.randint(0, 6, (32,), device=DEVICE)
        h = x
        for layer in encoder:
            h = layer(h) + h
        loss = nn.functional.cross_entropy(head(h), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(step, len(opt.param_groups), round(loss.item(), 4))


if __name__ == "__main__":
    main()
