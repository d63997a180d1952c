# A loop that leaves each step's output on a reference cycle while the
# cyclic collector is off, as torchtitan runs (gc.disable(), then its own
# gc.collect() every gc_freq steps, here more than the run's steps):
# garbage that waits for a collection ("garbage"). "kept": each output
# also appended to a list, which the program keeps: a leak.
import gc
import sys

import torch
import torch.nn as nn

mode = sys.argv[1]
GC_FREQ = 50


class Record:
    def __init__(self, tensor):
        self.tensor = tensor
        self.me = self  # a reference cycle


gc.disable()
gc.collect()
torch.manual_seed(0)
model = nn.Linear(256, 256)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
kept = []
for step in range(1, 21):
    out = model(torch.randn(64, 256))
    record = Record(out.detach().clone())  # ALLOC_LINE
    if mode == "kept":
        kept.append(record.tensor)  # STORE_LINE
    del record
    opt.zero_grad()
    out.pow(2).mean().backward()
    opt.step()
    if step % GC_FREQ == 0:
        gc.collect()
print(len(kept))
