"""Attribution the way Captum-style code collects it: a forward hook and a
full backward hook on a layer store its activation and gradient on an
attribution object, integrated gradients over 8 interpolation steps per
input, hooks removed afterwards; training steps in between."""
import os

import torch
import torch.nn as nn

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


class LayerRecorder:
    def __init__(self, layer):
        self.activation = None
        self.gradient = None
        self.handles = [layer.register_forward_hook(self.forward_hook),
                        layer.register_full_backward_hook(self.backward_hook)]

    def forward_hook(self, module, inputs, output):
        self.activation = output.detach()

    def backward_hook(self, module, grad_input, grad_output):
        self.gradient = grad_output[0].detach()

    def remove(self):
        for h in self.handles:
            h.remove()


def integrated_gradients(model, x, steps=8):
    baseline = torch.zeros_like(x)
    total = torch.zeros_like(x)
    for k in range(1, steps + 1):
        point = (baseline + k / steps * (x - baseline)).requires_grad_(True)
        grad, = torch.autograd.grad(model(point).sum(), point)
        total += grad
    return (x - baseline) * total / steps


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 3)).to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(3):
        for _ in range(5):
            x, y = torch.randn(16, 12, device=DEVICE), torch.randint(0, 3, (16,), device=DEVICE)
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        recorder = LayerRecorder(model[2])
        x = torch.randn(4, 12, device=DEVICE)
        model(x).max(1).values.sum().backward()
        attributions = integrated_gradients(model, x)
        print(epoch, tuple(recorder.activation.shape), tuple(recorder.gradient.shape),
              round(attributions.abs().sum().item(), 3))
        recorder.remove()
        opt.zero_grad()


if __name__ == "__main__":
    main()
