# memlife-corpus: expect=step_growth
# source: https://github.com/pytorch/pytorch/issues/149100
# source: https://github.com/pytorch/pytorch/pull/149354
# Summary: #149100: memory stays occupied because a @functools.cache on a
# method keeps its arguments (there `self`, the model) and results alive
# forever; #149354 fixed it by removing functools.cache ("would keep 'self'
# alive, leading to unexpected memory performance"). pytorch/pytorch#127686
# then enabled lint B019 for lru_cache on methods for the same reason.
#
# Here a module memoizes its per-step noise mask with an unbounded
# functools.lru_cache keyed by the step, so every step's mask tensor stays in
# the cache. Leaky: the cached method.  --fixed: the same computation,
# uncached (the fix of #149354).
import functools
import os
import sys
import weakref

import torch
import torch.nn as nn

from _truth import distinct_storage_bytes, write_truth

STEPS = 12
BATCH = 64
DIM = 2048
DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


class NoisyMLP(nn.Module):
    def __init__(self, cached):
        super().__init__()
        self.fc1 = nn.Linear(32, DIM)
        self.fc2 = nn.Linear(DIM, 4)
        self.cached = cached
        self.masks_made = []  # weak references, for the ground truth only

    def _make_mask(self, step):
        g = torch.Generator().manual_seed(1000 + step)
        mask = torch.bernoulli(torch.full((BATCH, DIM), 0.9), generator=g).to(DEVICE)  # LEAK-ALLOC (512 KiB)
        self.masks_made.append(weakref.ref(mask))
        return mask

    @functools.lru_cache(maxsize=None)  # LEAK-HOLD (unbounded cache keyed by (self, step))
    def noise_mask(self, step):
        return self._make_mask(step)

    def forward(self, x, step):
        mask = self.noise_mask(step) if self.cached else self._make_mask(step)
        return self.fc2(torch.relu(self.fc1(x)) * mask)


def main():
    fixed = "--fixed" in sys.argv
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    model = NoisyMLP(cached=not fixed).to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(STEPS):
        x = torch.randn(BATCH, 32, generator=g).to(DEVICE)
        y = torch.randn(BATCH, 4, generator=g).to(DEVICE)
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(model(x, step), y)
        loss.backward()
        opt.step()
    alive = [t for t in (ref() for ref in model.masks_made) if t is not None]
    retained = distinct_storage_bytes(alive)
    print("masks alive: %d, retained %d bytes" % (len({t.untyped_storage().data_ptr() for t in alive}), retained))
    write_truth(retained, "none" if fixed else "step_growth")


if __name__ == "__main__":
    main()
