"""The optimizer step fused into the backward pass, as the PyTorch tutorial
"How to save memory by fusing the optimizer step into the backward pass"
does it: one optimizer per parameter, stepped and zeroed from a
register_post_accumulate_grad_hook, so no gradient outlives its
accumulation. The hooks close over the optimizers, which hold the
parameters: a cycle through the hooks PyTorch keeps in C++, which
gc.collect() cannot free, so the program removes the hooks when it is done
(without that, a memlife.record() block around it reports the model and its
Adam state as leaked, tests/install/test_record.py)."""
import os

import torch
import torch.nn as nn

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(128, 128), nn.ReLU()) for _ in range(4)],
                          nn.Linear(128, 10)).to(DEVICE)
    optimizers = {p: torch.optim.Adam([p], lr=1e-3) for p in model.parameters()}

    def step_in_backward(param):
        optimizers[param].step()
        optimizers[param].zero_grad()

    handles = [p.register_post_accumulate_grad_hook(step_in_backward) for p in model.parameters()]
    for step in range(12):
        x = torch.randn(32, 128, device=DEVICE)
        y = torch.randint(0, 10, (32,), device=DEVICE)
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()  # every parameter is updated inside this call
        if step % 4 == 0:
            print(step, round(loss.item(), 4))
    for handle in handles:
        handle.remove()


if __name__ == "__main__":
    main()
