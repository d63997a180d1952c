"""PyTorch's own accounting tools around a training loop: FlopCounterMode
(a TorchDispatchMode) counts the FLOPs of one training step per module, and
torch.distributed's MemTracker (dispatch mode plus weak references to every
storage) tracks one step's memory by module; then plain steps."""
import os

import torch
import torch.nn as nn
from torch.distributed._tools.mem_tracker import MemTracker
from torch.utils.flop_counter import FlopCounterMode

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(64, 4, 128, batch_first=True), 2)
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        return self.head(self.encoder(x).mean(1))


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
    step(model, opt)  # optimizer state exists before the tools look
    counter = FlopCounterMode(display=False, depth=2)
    with counter:
        step(model, opt)
    tracker = MemTracker()
    tracker.track_external(model, opt)
    with tracker:
        step(model, opt)
    peak = tracker.get_tracker_snapshot("peak")
    for _ in range(8):
        loss = step(model, opt)
    print("flops", counter.get_total_flops(), "tracked devices", len(peak), "loss", round(loss, 3))


if __name__ == "__main__":
    main()
