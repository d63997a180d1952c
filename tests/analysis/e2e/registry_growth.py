# Issue 13 item 4 (C++ holders) in a whole run: a loop that gathers one new
# parameter per step through the C++ registry of ops/gathered_registry.cc and
# never releases it (a ZeRO-3 runtime that forgot its release path). The
# program drops every view it gets back: only the registry keeps the
# buffers, so growth must be named by the op whose tensors hold it.
import sys

import torch

PADDED_NUMEL = 262_144  # floats: 1 MiB per step

torch.ops.load_library(sys.argv[1])
w = torch.nn.Parameter(torch.ones(4))
opt = torch.optim.SGD([w], lr=0.1)
shard = torch.ones(256, 1000)
for step in range(10):
    view = torch.ops.memlife_test.gather(shard, step, PADDED_NUMEL)  # GATHER_LINE
    del view
    if len(sys.argv) > 2 and sys.argv[2] == "release":
        torch.ops.memlife_test.release(step, True)
    loss = (w * 2).sum()
    loss.backward()
    opt.step()
    opt.zero_grad()
