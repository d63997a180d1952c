# A TorchScript module that keeps each forward's output in a List[Tensor]
# attribute (a scorer's history, a streaming model's cache). The list lives
# in the module's C++ object: no Python container holds the tensors.
# "keep": never emptied (a leak); "reset": the loop calls reset(), which
# clears the list, each step.
import sys
from typing import List

import torch


class Scorer(torch.nn.Module):
    history: List[torch.Tensor]

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(256, 256)
        self.history = []

    def forward(self, x):
        y = self.lin(x)
        self.history.append(y.detach())  # STORE_LINE
        return y

    @torch.jit.export
    def reset(self):
        self.history.clear()


def main(mode):
    torch.manual_seed(0)
    scorer = torch.jit.script(Scorer())
    opt = torch.optim.SGD(scorer.parameters(), lr=0.01)
    for _ in range(10):
        loss = scorer(torch.randn(64, 256)).pow(2).mean()  # FORWARD_LINE
        opt.zero_grad()
        loss.backward()
        opt.step()
        if mode == "reset":
            scorer.reset()


if __name__ == "__main__":
    main(sys.argv[1])
