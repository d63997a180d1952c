# A program that says a tensor must be freed (memlife.expect_freed) and then
# keeps it in a cache anyway ("keep"), or drops it ("drop").
import sys

import memlife
import torch

cache = {}


def step(i, keep):
    activations = torch.randn(1024, 256)  # 1 MiB
    if keep:
        cache[i] = activations  # KEEP_LINE
    memlife.expect_freed(activations, f"activations {i}")  # EXPECT_LINE
    del activations


for i in range(3):
    step(i, sys.argv[1] == "keep")
    memlife.mark_step()
