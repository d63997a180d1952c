"""The program behind traces/cpu/small_loop.mltrace (a format-3 CPU trace
for the golden dump tests): a four-step loop with an optimizer (so the
holder walk runs and names `history`), one view that outlives its base, and
a gloo all-reduce waited through its Work, on a one-rank process group.

    memlife run -o /tmp/small -- python3 traces/cpu/small_loop.py
"""
import os
import tempfile

import torch
import torch.distributed as dist

history = []


def main():
    store = tempfile.mktemp(prefix="memlife-small-")
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=0, world_size=1)
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(4):
        loss = model(torch.randn(8, 16)).pow(2).mean()
        loss.backward()
        work = dist.all_reduce(model.weight.grad, async_op=True)
        work.wait()
        opt.step()
        opt.zero_grad()
        history.append(loss.detach())
    base = torch.zeros(4096)
    view = base[:16]
    del base
    print("kept", view.numel(), len(history))
    dist.destroy_process_group()
    if os.path.exists(store):
        os.unlink(store)


if __name__ == "__main__":
    main()
