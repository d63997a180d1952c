"""PyTorch's own accounting tools around a training loop: FlopCounterMode
(a TorchDispatchMode) counts the FLOPs of one training step per module, and
torch.utils.module_tracker.ModuleTracker names the module running each op
of another step (a dispatch mode reading tracker.parents), as a profiler
of one's own would; then plain steps."""
import collections

import torch
import torch.nn as nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode
from torch.utils.module_tracker import ModuleTracker
from _device import DEVICE  # cuda on the GPU half


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(64, 4, 128, batch_first=True), 2)
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        return self.head(self.encoder(x).mean(1))


class OpsPerModule(TorchDispatchMode):
    def __init__(self, tracker):
        super().__init__()
        self.tracker = tracker
        self.counts = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.counts[max(self.tracker.parents, key=len)] += 1
        return func(*args, **(kwargs or {}))


def step(model, opt):
    x, y = torch.randn(8, 16, 64, device=DEVICE), torch.randint(0, 10, (8,), device=DEVICE)
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


def main():
    torch.manual_seed(0)
    model = Net().to(DEVICE)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    step(model, opt)
    counter = FlopCounterMode(display=False, depth=2)
    with counter:
        step(model, opt)
    tracker = ModuleTracker()
    with tracker, OpsPerModule(tracker) as ops:
        step(model, opt)
    for _ in range(8):
        loss = step(model, opt)
    print("flops", counter.get_total_flops(), "busiest module", ops.counts.most_common(3), "loss", round(loss, 3))


if __name__ == "__main__":
    main()
