# A training loop that keeps each step's sample in a container: a
# deque(maxlen=...) still filling ("deque") or an lru_cache(maxsize=...)
# keyed by the step ("lru"), both bounded by design; or a plain list
# ("list"), which grows without bound: a leak.
import collections
import functools
import sys

import torch
import torch.nn as nn

mode = sys.argv[1]
torch.manual_seed(0)
model = nn.Linear(64, 8)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
buffer = collections.deque(maxlen=1000) if mode == "deque" else []


@functools.lru_cache(maxsize=500)
def noise(step):
    return torch.randn(256, 64)  # ALLOC_LINE


for step in range(24):
    x = noise(step) if mode == "lru" else torch.randn(256, 64)
    if mode != "lru":
        buffer.append(x)  # STORE_LINE
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(len(buffer), noise.cache_info().currsize)
