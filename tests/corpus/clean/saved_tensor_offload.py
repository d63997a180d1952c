"""Activations offloaded through saved-tensor hooks: torch.autograd.graph.
save_on_cpu around the forward, and a custom pair of pack/unpack hooks that
store the saved tensors as bf16 and restore them for the backward."""
import os

import torch
import torch.nn as nn

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def pack_bf16(t):
    if t.dtype == torch.float32:
        return ("bf16", t.to(torch.bfloat16))
    return ("raw", t)


def unpack_bf16(packed):
    kind, t = packed
    return t.float() if kind == "bf16" else t


def main():
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(128, 128), nn.Tanh()) for _ in range(6)],
                          nn.Linear(128, 10)).to(DEVICE)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(12):
        x = torch.randn(32, 128, device=DEVICE)
        y = torch.randint(0, 10, (32,), device=DEVICE)
        if step % 2 == 0:
            with torch.autograd.graph.save_on_cpu(pin_memory=DEVICE.type == "cuda"):
                loss = nn.functional.cross_entropy(model(x), y)
        else:
            with torch.autograd.graph.saved_tensors_hooks(pack_bf16, unpack_bf16):
                loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(step, round(loss.item(), 4))


if __name__ == "__main__":
    main()
