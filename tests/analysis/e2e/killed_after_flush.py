# A training loop killed (SIGKILL) after its recording was flushed: the
# trace holds what was recorded but no end record.
import os
import signal

import torch

import memlife


def main():
    net = torch.nn.Linear(64, 64)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(4):
        net(torch.randn(8, 64)).sum().backward()
        opt.step()
        opt.zero_grad()
    memlife.flush()
    os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    main()
