"""torch.compile on the model and on the optimizer step (inductor, CPU), as
the PyTorch compiled-optimizer tutorial does."""
import os

import torch
import torch.nn as nn

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 64)).to(DEVICE)
    opt = torch.optim.Adam(model.parameters(), lr=torch.tensor(1e-3))
    compiled = torch.compile(model)

    @torch.compile(fullgraph=False)
    def opt_step():
        opt.step()

    for step in range(10):
        x = torch.randn(32, 64, device=DEVICE)
        loss = compiled(x).pow(2).mean()
        loss.backward()
        opt_step()
        opt.zero_grad()
    print("loss", float(loss))


if __name__ == "__main__":
    main()
