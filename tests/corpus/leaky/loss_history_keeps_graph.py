# memlife-corpus: expect=step_growth
# source: https://pytorch.org/docs/stable/notes/faq.html
# source: https://github.com/huggingface/transformers/pull/6999
# Summary: PyTorch's FAQ, "Don't accumulate history across your training
# loop": a loss kept as a tensor keeps its autograd history. The HF Trainer
# kept its running loss so (#6999, "fixed trainer tr_loss memory leak"):
# sgugger, "we don't call .detach(), which means some variables are kept
# forever for a backward pass (that is never called)"; the fix detached it.
# Here a loop logs each step's loss in a list: backward frees what the graph
# saved, so the tensor memory that grows is one number a step, but each
# number keeps its graph's nodes.
#
# Leaky: losses.append(loss).  --fixed: losses.append(loss.detach()), a
# record of numbers with no graph, kept by design (memlife sets it aside).
import os
import sys

import torch
import torch.nn as nn

from _truth import distinct_storage_bytes, write_truth

STEPS = 40
DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def main():
    fixed = "--fixed" in sys.argv
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.Tanh(), nn.Linear(64, 1)).to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    losses = []
    for step in range(STEPS):
        x = torch.randn(16, 32, device=DEVICE)
        y = torch.randn(16, 1, device=DEVICE)
        opt.zero_grad(set_to_none=True)
        loss = (model(x) - y).pow(2).mean()  # LEAK-ALLOC (one fp32 number a step)
        loss.backward()
        opt.step()
        losses.append(loss.detach() if fixed else loss)  # LEAK-HOLD (with its graph)
    print("mean loss %.4f" % torch.stack([l.detach() for l in losses]).mean().item())
    write_truth(distinct_storage_bytes(losses), "none" if fixed else "step_growth")


if __name__ == "__main__":
    main()
