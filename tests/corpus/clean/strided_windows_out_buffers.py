"""Sliding windows and preallocated outputs, the way signal-processing and
time-series code writes them: unfold and as_strided windows over a long
signal, results written into reused buffers with out= (torch.cat, torch.mm,
torch.add), a rolling history kept by copy_ into a fixed tensor, and
set_() pointing a working tensor at another's storage."""
import torch
import torch.nn as nn
from _device import DEVICE  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    window, hop = 64, 16
    model = nn.Sequential(nn.Linear(window, 32), nn.ReLU(), nn.Linear(32, 1)).to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    history = torch.zeros(8, window, device=DEVICE)
    features = torch.empty(0, device=DEVICE)
    projected = torch.empty(0, device=DEVICE)
    scratch = torch.empty(0, device=DEVICE)
    for step in range(10):
        signal = torch.randn(2048, device=DEVICE)
        frames = signal.unfold(0, window, hop)  # a view: (n, window)
        n = (signal.numel() - window) // hop + 1
        strided = signal.as_strided((n, window), (hop, 1))
        assert torch.equal(frames, strided)
        torch.cat([frames[:4], history[:4]], out=features)
        torch.mm(features, features.t(), out=projected)
        torch.add(projected, 1.0, out=projected)
        history[step % 8].copy_(frames[-1])
        scratch.set_(frames.contiguous().untyped_storage(), 0, (n, window), (window, 1))
        target = scratch.mean(1, keepdim=True)
        loss = (model(scratch) - target).pow(2).mean() + 1e-6 * projected.trace()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(step, round(loss.item(), 5))


if __name__ == "__main__":
    main()
