"""Parametrized weights: spectral norm and orthogonal parametrizations
(torch.nn.utils.parametrizations), with the parametrize.cached() context
in evaluation, and fp16 autocast with a GradScaler."""
import torch
import torch.nn as nn
from torch.nn.utils import parametrize
from torch.nn.utils.parametrizations import orthogonal, spectral_norm
from _device import DEVICE  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    model = nn.Sequential(spectral_norm(nn.Linear(32, 64)), nn.ReLU(), orthogonal(nn.Linear(64, 64)),
                          nn.ReLU(), nn.Linear(64, 4)).to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = torch.amp.GradScaler(DEVICE.type)
    for step in range(12):
        x, y = torch.randn(16, 32, device=DEVICE), torch.randint(0, 4, (16,), device=DEVICE)
        with torch.autocast(DEVICE.type, dtype=torch.float16):
            loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        if step % 4 == 3:
            model.eval()
            with torch.no_grad(), parametrize.cached():
                for _ in range(3):
                    model(torch.randn(16, 32, device=DEVICE))
            model.train()
    print("loss", float(loss))


if __name__ == "__main__":
    main()
