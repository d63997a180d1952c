# memlife-corpus: expect=step_growth
# source: https://github.com/pytorch/pytorch/issues/40005
# Summary: "retain_graph = True out of memory issue": a distillation loop
# calls output.backward(retain_graph=True) for several per-layer losses and
# runs out of memory; albanD closed it as the known issue #4661 (graphs kept
# alive) and recommended autograd.grad. With retain_graph=True the saved
# activations stay attached to the graph, so any reference to a loss that is
# kept (here a loss log) keeps every step's activations alive.
#
# Leaky: last backward with retain_graph=True and losses kept as tensors.
# --fixed: the last backward frees the graph and the log keeps loss.item().
import os
import sys

import torch
import torch.nn as nn

from _truth import distinct_storage_bytes, graph_saved_tensors, storage_ptrs, write_truth

STEPS = 12
DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


class Student(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(128, 512)
        self.l2 = nn.Linear(512, 512)
        self.out = nn.Linear(512, 16)

    def forward(self, x):
        h1 = torch.tanh(self.l1(x))  # LEAK-ALLOC (saved by tanh and l2)
        h2 = torch.tanh(self.l2(h1))  # LEAK-ALLOC (saved by tanh and out)
        return h1, h2, self.out(h2)


def main():
    fixed = "--fixed" in sys.argv
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    student = Student().to(DEVICE)
    teacher = [torch.randn(128, 512, generator=g).to(DEVICE), torch.randn(512, 512, generator=g).to(DEVICE)]
    opt = torch.optim.SGD(student.parameters(), lr=0.01)
    loss_log = []
    for step in range(STEPS):
        x = torch.randn(256, 128, generator=g).to(DEVICE)  # LEAK-ALLOC (saved by l1)
        with torch.no_grad():
            t1 = torch.tanh(x @ teacher[0])  # LEAK-ALLOC (saved by mse_loss as target)
            t2 = torch.tanh(t1 @ teacher[1])  # LEAK-ALLOC (saved by mse_loss as target)
        opt.zero_grad(set_to_none=True)
        h1, h2, logits = student(x)
        # each 0-dim mse_loss result owns a full 256 x 512 fp32 storage on CPU
        losses = [nn.functional.mse_loss(h1, t1), nn.functional.mse_loss(h2, t2)]  # LEAK-ALLOC (2 x 512 KiB)
        for i, layer_loss in enumerate(losses):
            last = i == len(losses) - 1
            layer_loss.backward(retain_graph=not (fixed and last))
        opt.step()
        if fixed:
            loss_log.append(sum(l.item() for l in losses))
        else:
            loss_log.append(losses)  # LEAK-HOLD (graphs retained by retain_graph=True)
    held = []
    for entry in loss_log:
        if isinstance(entry, list):
            held.extend(entry)
            held.extend(graph_saved_tensors([l.grad_fn for l in entry]))
    retained = distinct_storage_bytes(held, storage_ptrs(student.parameters()))
    print("loss log of %d entries holds %d bytes" % (len(loss_log), retained))
    write_truth(retained, "none" if fixed else "step_growth")


if __name__ == "__main__":
    main()
