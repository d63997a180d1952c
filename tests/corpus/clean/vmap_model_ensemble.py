"""Model ensembling as the torch.func tutorial does it: stack_module_state
over five models, functional_call on a meta-device base model, vmap over
the stacked parameters, trained with an optimizer over the stacked
tensors."""
import copy
import os

import torch
import torch.nn as nn
from torch.func import functional_call, stack_module_state

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def make_model():
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2)).to(DEVICE)


def main():
    torch.manual_seed(0)
    models = [make_model() for _ in range(5)]
    params, buffers = stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")
    del models

    def run_one(p, b, x):
        return functional_call(base, (p, b), (x,))

    ensemble = torch.vmap(run_one, in_dims=(0, 0, None))
    opt = torch.optim.Adam(list(params.values()), lr=1e-2)
    for step in range(12):
        x = torch.randn(64, 16, device=DEVICE)
        y = (x[:, 0] > 0).long()
        logits = ensemble(params, buffers, x)  # (5, 64, 2)
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), y.repeat(5))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 4 == 0:
            print(step, round(loss.item(), 4))


if __name__ == "__main__":
    main()
