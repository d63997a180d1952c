# A loop that hands each step's output over as a completed
# torch.futures.Future (as an RPC or a c10d work's get_future() would) and
# keeps the futures ("list": grows without bound, a leak), or keeps only the
# last few ("bounded"). The future holds its value in C++.
import collections
import sys

import torch
import torch.nn as nn

mode = sys.argv[1]
torch.manual_seed(0)
model = nn.Linear(256, 256)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
results = [] if mode == "list" else collections.deque(maxlen=4)

for step in range(16):
    out = model(torch.randn(64, 256))
    opt.zero_grad()
    out.pow(2).mean().backward()
    opt.step()
    fut = torch.futures.Future()
    fut.set_result(out.detach().clone())  # ALLOC_LINE
    results.append(fut)  # STORE_LINE
print(len(results))
