"""Data-dependent control flow kept inside a compiled graph: torch.cond picks
one of two branches from a tensor predicate, torch.compile(fullgraph=True)
captures it, and the model trains through both branches."""
import os

import torch
import torch.nn as nn

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


class Gated(nn.Module):
    def __init__(self):
        super().__init__()
        self.small = nn.Linear(32, 32)
        self.large = nn.Sequential(nn.Linear(32, 128), nn.GELU(), nn.Linear(128, 32))
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        h = torch.cond(x.abs().mean() > 0.8, lambda t: self.large(t), lambda t: self.small(t), (x,))
        return self.head(h)


def main():
    torch.manual_seed(0)
    model = Gated().to(DEVICE)
    compiled = torch.compile(model, fullgraph=True)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(8):
        x = torch.randn(16, 32, device=DEVICE) * (0.5 if step % 2 else 2.0)
        y = torch.randint(0, 4, (16,), device=DEVICE)
        loss = nn.functional.cross_entropy(compiled(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(step, round(loss.item(), 4))


if __name__ == "__main__":
    main()
