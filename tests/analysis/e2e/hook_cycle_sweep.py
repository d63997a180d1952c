"""A learning-rate sweep over the optimizer step fused into backward, as the
PyTorch tutorial "How to save memory by fusing the optimizer step into the
backward pass" writes it: each trial builds a model, steps one Adam per
parameter from a post-accumulate-grad hook that closes over the dict of
optimizers (keyed by the parameters), trains, and returns. PyTorch keeps the
hooks in C++, so the cycle parameter -> hook -> optimizers -> parameter is
invisible to the garbage collector: every trial's model and Adam state stay
allocated, unreachable, until the process dies. `fixed` removes the hooks at
the end of each trial. Writes the bytes the trials leave behind to argv[2].

    python3 hook_cycle_sweep.py leak|fixed KEPT_FILE
"""
import sys

import torch
import torch.nn as nn


def trial(lr, fixed, steps=6):
    model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
    optimizers = {p: torch.optim.Adam([p], lr=lr) for p in model.parameters()}

    def step_in_backward(param):
        optimizers[param].step()  # STATE_LINE
        optimizers[param].zero_grad()

    handles = [p.register_post_accumulate_grad_hook(step_in_backward) for p in model.parameters()]
    for _ in range(steps):
        loss = nn.functional.cross_entropy(model(torch.randn(32, 256)), torch.randint(0, 10, (32,)))
        loss.backward()
    kept = sum(p.nbytes for p in model.parameters()) + sum(
        t.nbytes for o in optimizers.values() for s in o.state.values() for t in s.values())
    if fixed:
        for handle in handles:
            handle.remove()
    return kept


def main():
    mode, kept_file = sys.argv[1], sys.argv[2]
    torch.manual_seed(0)
    kept = sum(trial(lr, mode == "fixed") for lr in (1e-4, 3e-4, 1e-3, 3e-3))
    with open(kept_file, "w") as f:
        f.write(str(0 if mode == "fixed" else kept))


if __name__ == "__main__":
    main()
