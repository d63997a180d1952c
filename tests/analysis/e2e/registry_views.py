# A registry hands out true-shape views of padded buffers (ZeRO-3, seed 000)
# and releases its own tensor with `t.data = torch.empty(0)` (leaves the
# padded storage to the views) or with a storage resize to 0 (frees it).
import sys

import torch

PADDED = 3_148_800  # floats: 12,595,200 bytes
TRUE = 3_000_000


class Registry:
    def __init__(self):
        self.buffers = {}

    def gather(self, key):
        padded = torch.empty(PADDED)
        self.buffers[key] = padded
        return padded.narrow(0, 0, TRUE).view(3000, 1000)  # VIEW_LINE

    def release(self, key, mode):
        t = self.buffers.pop(key)
        if mode == "data":
            t.data = torch.empty(0)
        else:
            t.untyped_storage().resize_(0)


def main(mode):
    w = torch.nn.Parameter(torch.ones(4))
    opt = torch.optim.SGD([w], lr=0.1)
    registry = Registry()
    held = []
    for step in range(4):
        if step == 1:
            view = registry.gather("p")
            held.append(view)
            registry.release("p", mode)
        loss = (w * 2).sum()
        loss.backward()
        opt.step()
        opt.zero_grad()
    del held


if __name__ == "__main__":
    main(sys.argv[1])
