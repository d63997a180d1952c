"""A Python custom operator defined with torch.library.custom_op (the
PyTorch custom ops tutorial): a fused scaled-GELU op with register_fake for
tracing and register_autograd for its backward, used inside a model that
torch.compile(fullgraph=True) compiles, trained for a few steps."""
import os

import torch
import torch.nn as nn

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


@torch.library.custom_op("corpus::scaled_gelu", mutates_args=())
def scaled_gelu(x: torch.Tensor, scale: float) -> torch.Tensor:
    return torch.nn.functional.gelu(x) * scale


@scaled_gelu.register_fake
def _(x, scale):
    return torch.empty_like(x)


def setup_context(ctx, inputs, output):
    x, scale = inputs
    ctx.save_for_backward(x)
    ctx.scale = scale


def backward(ctx, grad):
    x, = ctx.saved_tensors
    cdf = 0.5 * (1 + torch.erf(x / 2 ** 0.5))
    pdf = torch.exp(-0.5 * x * x) / (2 * torch.pi) ** 0.5
    return grad * ctx.scale * (cdf + x * pdf), None


scaled_gelu.register_autograd(backward, setup_context=setup_context)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(32, 64)
        self.b = nn.Linear(64, 8)

    def forward(self, x):
        return self.b(scaled_gelu(self.a(x), 1.5))


def main():
    torch.manual_seed(0)
    model = Net().to(DEVICE)
    compiled = torch.compile(model, fullgraph=True)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(6):
        x, y = torch.randn(16, 32, device=DEVICE), torch.randint(0, 8, (16,), device=DEVICE)
        loss = nn.functional.cross_entropy(compiled(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(step, round(loss.item(), 4))


if __name__ == "__main__":
    main()
