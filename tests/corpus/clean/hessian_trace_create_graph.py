"""A second-order method's inner loop (AdaHessian-style Hutchinson trace
estimate): backward(create_graph=True) keeps the gradients' graph, the
Hessian-vector product comes from torch.autograd.grad of grads . v, the
update uses its diagonal, and the gradients are set to None each step to
break the parameter-gradient cycle PyTorch warns about."""
import os
import warnings

import torch
import torch.nn as nn

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    warnings.filterwarnings("ignore", message="Using backward\\(\\) with create_graph=True")
    model = nn.Sequential(nn.Linear(20, 32), nn.Tanh(), nn.Linear(32, 1)).to(DEVICE)
    params = list(model.parameters())
    for step in range(12):
        x, y = torch.randn(64, 20, device=DEVICE), torch.randn(64, 1, device=DEVICE)
        loss = (model(x) - y).pow(2).mean()
        loss.backward(create_graph=True)
        grads = [p.grad for p in params]
        vs = [torch.randint_like(p, 2) * 2 - 1 for p in params]
        hvs = torch.autograd.grad(grads, params, grad_outputs=vs)
        with torch.no_grad():
            for p, g, v, hv in zip(params, grads, vs, hvs):
                p -= 0.05 * g / ((hv * v).abs() + 1e-2)
        for p in params:
            p.grad = None
        del grads, hvs
        if step % 4 == 0:
            print(step, round(loss.item(), 4))


if __name__ == "__main__":
    main()
