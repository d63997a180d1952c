"""Model-agnostic meta-learning (MAML) with torch.func.functional_call: for
each task a few inner SGD steps on fast weights made with
autograd.grad(create_graph=True), the query loss of every task summed, one
outer step through all the inner graphs."""
import os

import torch
import torch.nn as nn
from torch.func import functional_call

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def sample_task():
    amplitude, phase = torch.rand(1) * 4.9 + 0.1, torch.rand(1) * 3.14
    def batch(n):
        x = torch.rand(n, 1) * 10 - 5
        return x.to(DEVICE), (amplitude * torch.sin(x + phase)).to(DEVICE)
    return batch


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(1, 40), nn.ReLU(), nn.Linear(40, 40), nn.ReLU(), nn.Linear(40, 1)).to(DEVICE)
    meta_opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    inner_lr, inner_steps, tasks = 0.01, 3, 4
    for step in range(10):
        meta_opt.zero_grad()
        outer = 0.0
        for _ in range(tasks):
            batch = sample_task()
            fast = dict(model.named_parameters())
            xs, ys = batch(10)
            for _ in range(inner_steps):
                loss = nn.functional.mse_loss(functional_call(model, fast, (xs,)), ys)
                grads = torch.autograd.grad(loss, list(fast.values()), create_graph=True)
                fast = {name: w - inner_lr * g for (name, w), g in zip(fast.items(), grads)}
            xq, yq = batch(10)
            outer = outer + nn.functional.mse_loss(functional_call(model, fast, (xq,)), yq)
        (outer / tasks).backward()
        meta_opt.step()
        print(step, round(outer.item() / tasks, 4))


if __name__ == "__main__":
    main()
