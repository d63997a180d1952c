# A small CPU training loop with two classic leaks, for the views tests:
# a slice of each step's activations is kept in a list (the view keeps the
# whole activation's storage alive), and the loss tensor is appended to a
# history without .item(), so memory climbs step after step.
import sys

import torch

try:
    import memlife
except ImportError:  # run without the recorder
    memlife = None

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 8
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
kept_slices, losses = [], []
for step in range(steps):
    x = torch.randn(64, 256)
    hidden = model[1](model[0](x))
    kept_slices.append(hidden[:1])  # residual view: 128 KiB storage kept for a 2 KiB row
    loss = model[2](hidden).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss)
    if memlife is not None:
        memlife.mark_step()
print("done", len(kept_slices), float(losses[-1]))
