"""Custom autograd Functions of the kinds the extending-autograd docs
describe: an in-place clamp that marks its input dirty (ctx.mark_dirty), a
function with a non-differentiable integer output (mark_non_differentiable)
and one with setup_context and @once_differentiable; a model trained with
them."""
import torch
import torch.nn as nn
from torch.autograd.function import once_differentiable
from _device import DEVICE  # cuda on the GPU half


class ClampInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, bound):
        mask = x.abs() <= bound
        x.clamp_(-bound, bound)
        ctx.mark_dirty(x)
        ctx.save_for_backward(mask)
        return x

    @staticmethod
    def backward(ctx, grad):
        mask, = ctx.saved_tensors
        return grad * mask, None


class TopIndex(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        values, index = x.max(dim=1)
        ctx.mark_non_differentiable(index)
        ctx.save_for_backward(x, index)
        return values, index

    @staticmethod
    def backward(ctx, grad_values, grad_index):
        x, index = ctx.saved_tensors
        grad = torch.zeros_like(x)
        grad.scatter_(1, index.unsqueeze(1), grad_values.unsqueeze(1))
        return grad


class Square(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return 2 * x * grad


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.Linear(32, 8)).to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(10):
        h = model[0](torch.randn(12, 16, device=DEVICE))
        h = ClampInPlace.apply(h * 1.0, 1.0)
        out = model[1](Square.apply(h))
        values, index = TopIndex.apply(out)
        loss = values.mean() + 0.01 * out.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(step, round(loss.item(), 4), index[:3].tolist())


if __name__ == "__main__":
    main()
