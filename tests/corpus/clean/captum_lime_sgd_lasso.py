"""Captum's LIME explaining a small classifier, with its SGD-trained Lasso as
the interpretable model (captum 0.9.0, unchanged): a few training steps of
the classifier, then `Lime.attribute`, which fits the surrogate by running
its own SGD loop (optimizer steps) in `sgd_train_linear_model`.

That loop keeps each step's detached 0-d loss in a `LossWindow`, a local of
the library function, to average for convergence, and frees it when the fit
returns: a record of numbers kept by design, on a frame the library is
running. Before the walk named what a running library call holds, no walk
reached it and it was a false `step_growth` error (40 B here; 2,000 B in
captum's own test_lime.py)."""
import functools
import os

import torch
from captum._utils.models.linear_model import SGDLasso
from captum.attr import Lime

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half
TRAIN_STEPS = 20


def main():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                              torch.nn.Linear(16, 3)).to(DEVICE)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x = torch.randn(64, 8, device=DEVICE)
    y = torch.randint(0, 3, (64,), device=DEVICE)
    for _ in range(TRAIN_STEPS):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(x), y).backward()
        opt.step()

    surrogate = SGDLasso()
    # captum's own test_simple_lime_sgd_model binds its fit arguments the same way.
    # The surrogate's parameters are made on the CPU and sgd_train_linear_model
    # moves only the data (to `device`), so on CUDA the fit runs on the CPU.
    surrogate.fit = functools.partial(surrogate.fit, initial_lr=0.1, max_epoch=120, device="cpu")
    lime = Lime(net, interpretable_model=surrogate)
    attribution = lime.attribute(x[:1], target=0, n_samples=64)
    print("attribution", attribution.tolist())


if __name__ == "__main__":
    main()
