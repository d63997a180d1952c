# memlife-corpus: expect=step_growth
# source: https://github.com/pytorch/pytorch/issues/64586
# source: https://discuss.pytorch.org/t/calling-loss-backward-reduce-memory-usage/2735
# Summary: a loss tensor is accumulated across iterations without .item()
# ("after every epoch, the memory increase ... .item() should be added",
# #64586). Here it is the periodic held-out loss, computed without
# torch.no_grad() and never backwarded, so each accumulated term keeps its
# whole autograd graph and every activation the graph saved (forum #2735:
# a graph that is not backwarded holds its buffers while the loss lives).
#
# Leaky: running_val = running_val + val_loss.  --fixed: += val_loss.item().
import os
import sys

import torch
import torch.nn as nn

from _truth import distinct_storage_bytes, graph_saved_tensors, storage_ptrs, write_truth

STEPS = 12
DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(128, 512)
        self.fc2 = nn.Linear(512, 512)
        self.fc3 = nn.Linear(512, 10)

    def forward(self, x):
        h1 = torch.relu(self.fc1(x))  # LEAK-ALLOC (saved by the graph)
        h2 = torch.relu(self.fc2(h1))  # LEAK-ALLOC (saved by the graph)
        return self.fc3(h2)


def main():
    fixed = "--fixed" in sys.argv
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    model = MLP().to(DEVICE)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    crit = nn.CrossEntropyLoss()
    running_val = 0.0
    for step in range(STEPS):
        x = torch.randn(64, 128, generator=g).to(DEVICE)
        y = torch.randint(0, 10, (64,), generator=g).to(DEVICE)
        opt.zero_grad(set_to_none=True)
        loss = crit(model(x), y)
        loss.backward()
        opt.step()

        # held-out loss, meant only for logging (no torch.no_grad())
        xv = torch.randn(256, 128, generator=g).to(DEVICE)  # LEAK-ALLOC (saved by fc1's graph)
        yv = torch.randint(0, 10, (256,), generator=g).to(DEVICE)  # LEAK-ALLOC (saved by nll_loss)
        val_loss = crit(model(xv), yv)  # LEAK-ALLOC (log_softmax result saved)
        if fixed:
            running_val += val_loss.item()
        else:
            running_val = running_val + val_loss  # LEAK-HOLD (chains every graph)
    if isinstance(running_val, torch.Tensor):
        held = [running_val] + graph_saved_tensors([running_val.grad_fn])
    else:
        held = []
    retained = distinct_storage_bytes(held, storage_ptrs(model.parameters()))
    print("mean held-out loss %.4f, retained %d bytes" % (float(running_val.detach() if isinstance(running_val, torch.Tensor) else running_val) / STEPS, retained))
    write_truth(retained, "none" if fixed else "step_growth")


if __name__ == "__main__":
    main()
