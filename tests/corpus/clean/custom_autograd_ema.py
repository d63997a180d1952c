"""A custom autograd.Function (save_for_backward, as the docs prescribe)
in a model trained with a timm-style EMA: a deepcopy updated under no_grad
with torch._foreach_lerp_ every step."""
import copy

import torch
import torch.nn as nn
from _device import DEVICE  # cuda on the GPU half


class ScaledGelu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return scale * nn.functional.gelu(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        with torch.enable_grad():
            x = x.detach().requires_grad_()
            y = nn.functional.gelu(x)
            (g,) = torch.autograd.grad(y, x, grad * ctx.scale)
        return g, None


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(32, 64), nn.Linear(64, 8)

    def forward(self, x):
        return self.b(ScaledGelu.apply(self.a(x), 0.5))


def main():
    torch.manual_seed(0)
    model = Net().to(DEVICE)
    ema = copy.deepcopy(model).requires_grad_(False)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(20):
        x, y = torch.randn(16, 32, device=DEVICE), torch.randn(16, 8, device=DEVICE)
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            torch._foreach_lerp_(list(ema.parameters()), list(model.parameters()), 0.01)
    print("loss", float(loss))


if __name__ == "__main__":
    main()
