"""An exponential moving average of a model with BatchNorm through
torch.optim.swa_utils: AveragedModel with get_ema_multi_avg_fn and
use_buffers=True, updated every step, evaluated each epoch."""
import torch
import torch.nn as nn
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
from _device import DEVICE  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5)).to(DEVICE)
    ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.99), use_buffers=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
    for epoch in range(3):
        model.train()
        for _ in range(6):
            x, y = torch.randn(8, 3, 16, 16, device=DEVICE), torch.randint(0, 5, (8,), device=DEVICE)
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
            ema.update_parameters(model)
        ema.eval()
        with torch.no_grad():
            print(epoch, ema(torch.randn(4, 3, 16, 16, device=DEVICE)).argmax(1).tolist())


if __name__ == "__main__":
    main()
