# A training loop that keeps every step's loss tensor (and so its autograd
# graph) in a list, or only its value with .item().
import sys

import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(128, 512)
        self.l2 = torch.nn.Linear(512, 1)

    def forward(self, x):
        h = torch.relu(self.l1(x))  # FORWARD_LINE
        return self.l2(h).mean()


def main(mode):
    torch.manual_seed(0)
    net = Net()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.randn(64, 128)
    losses = []
    for _ in range(10):
        loss = net(x)
        opt.zero_grad()
        loss.backward(retain_graph=mode == "keep")
        opt.step()
        losses.append(loss if mode == "keep" else loss.item())


if __name__ == "__main__":
    main(sys.argv[1])
