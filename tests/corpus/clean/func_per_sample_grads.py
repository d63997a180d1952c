"""Per-sample gradients with torch.func (functional_call, grad, vmap), the
way DP-SGD libraries compute them, and a clipped, noised SGD update."""
import os

import torch
import torch.nn as nn
from torch.func import functional_call, grad, vmap

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 4)).to(DEVICE)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss_one(p, x, y):
        out = functional_call(model, p, (x.unsqueeze(0),))
        return nn.functional.cross_entropy(out, y.unsqueeze(0))

    per_sample = vmap(grad(loss_one), in_dims=(None, 0, 0))
    for step in range(15):
        x = torch.randn(16, 20, device=DEVICE)
        y = torch.randint(0, 4, (16,), device=DEVICE)
        grads = per_sample(params, x, y)
        norms = torch.stack([g.reshape(16, -1).norm(dim=1) for g in grads.values()]).norm(dim=0)
        scale = (1.0 / norms.clamp(min=1.0)).reshape(16, 1)
        with torch.no_grad():
            for k, g in grads.items():
                g = (g.reshape(16, -1) * scale).sum(0).reshape(params[k].shape)
                g += 0.01 * torch.randn_like(g)
                params[k] = params[k] - 0.05 * g / 16
    print("done", float(sum(v.sum() for v in params.values())))


if __name__ == "__main__":
    main()
