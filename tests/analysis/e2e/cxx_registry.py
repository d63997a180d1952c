# The registry of ops/gathered_registry.cc (DeepCompile's ZeRO-3 gather and
# release, in C++): the training loop keeps the gathered view of one step
# (as a compiled graph's saved buffer would) while the op releases the
# padded buffer with set_data ("set_data", the 0.19.1 release) or frees
# its storage ("free", the 0.19.2 fix). "set_data_exact" gathers into a
# buffer with no padding (one rank), where the view spans all of it.
import sys

import torch

TRUE_NUMEL = 3_000_000
PADDED_NUMEL = 3_148_800  # floats: 12,595,200 bytes


def main(lib, mode):
    torch.ops.load_library(lib)
    w = torch.nn.Parameter(torch.ones(4))
    opt = torch.optim.SGD([w], lr=0.1)
    shard = torch.ones(3000, 1000)
    padded = TRUE_NUMEL if mode == "set_data_exact" else PADDED_NUMEL
    held = []
    for step in range(4):
        if step == 1:
            view = torch.ops.memlife_test.gather(shard, 7, padded)  # VIEW_LINE
            held.append(view)
            torch.ops.memlife_test.release(7, mode == "free")  # RELEASE_LINE
        loss = (w * 2).sum()
        loss.backward()
        opt.step()
        opt.zero_grad()
    del held


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
