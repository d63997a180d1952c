"""A TorchScript model (torch.jit.script) trained, then traced
(torch.jit.trace) for an inference loop, as deployment code still does.
Not frozen: torch.jit.freeze inlines the parameters as constants that
TorchScript's compilation unit keeps for the life of the process
(pytorch/pytorch#96726, open), which memlife reports inside a
memlife.record() block."""
import os

import torch
import torch.nn as nn

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8 * 8 * 8, 10)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv(x)))
        x = nn.functional.max_pool2d(x, 2)
        return self.fc(x.flatten(1))


def main():
    torch.manual_seed(0)
    scripted = torch.jit.script(Net().to(DEVICE))
    opt = torch.optim.SGD(scripted.parameters(), lr=0.05)
    for step in range(10):
        x = torch.randn(16, 1, 16, 16, device=DEVICE)
        y = torch.randint(0, 10, (16,), device=DEVICE)
        loss = nn.functional.cross_entropy(scripted(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    scripted.eval()
    traced = torch.jit.trace(scripted, torch.randn(4, 1, 16, 16, device=DEVICE))
    correct = 0
    with torch.no_grad():
        for _ in range(10):
            x = torch.randn(32, 1, 16, 16, device=DEVICE)
            correct += int((traced(x).argmax(1) == scripted(x).argmax(1)).sum())
    print("agree", correct)


if __name__ == "__main__":
    main()
