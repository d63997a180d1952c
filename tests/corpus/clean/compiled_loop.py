"""Train a small MLP compiled with torch.compile (inductor; on CPU, on CUDA in the GPU half).

The model is kept tiny: on a 2-core machine a cold inductor compile of the
forward and backward graphs takes ~35 s (a transformer block took ~55 s);
later runs hit the inductor cache in /tmp."""
import os

import torch
import torch.nn as nn

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


class MLP(nn.Module):
    def __init__(self, dim=32, hidden=64, num_classes=5):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(dim, hidden), nn.GELU(), nn.LayerNorm(hidden), nn.Linear(hidden, num_classes)
        )

    def forward(self, x):
        return self.net(x)


def main():
    torch.manual_seed(0)
    model = MLP().to(DEVICE)
    compiled = torch.compile(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    for step in range(6):
        x = torch.randn(16, 32, device=DEVICE)
        y = torch.randint(0, 5, (16,), device=DEVICE)
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(compiled(x), y)
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
