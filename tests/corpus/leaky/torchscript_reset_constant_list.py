# memlife-corpus: expect=step_growth
# source: https://github.com/pytorch/pytorch/issues/106128
# Summary: #106128: TorchScript's optimizer turns an empty list literal
# (prim::ListConstruct()) into a prim::Constant, so once a method has been
# profiled and optimized, every `self.values = []` it runs assigns the same
# list object ("expect different lists" fails for the second instance).
# A module that empties its state that way stops emptying it: from then on
# each reset hands back the one list that keeps everything appended to it.
#
# Here: a scripted Transformer-XL-style segment-recurrent encoder that caches
# each segment's hidden states as memory for the next segment and drops its
# memory at the start of every training sequence with reset_memory()
# (`self.mems = []`). After the first runs, reset_memory() no longer drops
# anything: every step's cached states stay in the module's C++ list
# attribute. Leaky: `self.mems = []`. --fixed: `self.mems.clear()`.
import os
import sys
from typing import Final, List

import torch
import torch.nn as nn

from _truth import distinct_storage_bytes, write_truth

STEPS = 12
SEGMENTS = 4
BATCH, SEGMENT_LEN, DIM = 16, 32, 128
DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


class SegmentEncoder(nn.Module):
    mems: List[torch.Tensor]
    fixed: Final[bool]  # a constant of the compiled methods

    def __init__(self, fixed: bool):
        super().__init__()
        self.attn = nn.MultiheadAttention(DIM, 4, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(), nn.Linear(4 * DIM, DIM))
        self.norm = nn.LayerNorm(DIM)
        self.fixed = fixed
        self.mems = []

    @torch.jit.export
    def reset_memory(self):
        if self.fixed:
            self.mems.clear()
        else:
            self.mems = []  # LEAK-HOLD (optimized to one shared list: #106128)

    def forward(self, x):
        context = x
        if len(self.mems) > 0:
            context = torch.cat([self.mems[-1], x], dim=1)
        h, _ = self.attn(x, context, context, need_weights=False)
        h = self.norm(x + h)
        h = self.norm(h + self.ff(h))
        self.mems.append(h.detach())  # LEAK-HOLD (the cached states, kept by the shared list)
        return h


def main():
    fixed = "--fixed" in sys.argv
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    encoder = torch.jit.script(SegmentEncoder(fixed).to(DEVICE))
    head = nn.Linear(DIM, 10).to(DEVICE)
    opt = torch.optim.AdamW(list(encoder.parameters()) + list(head.parameters()), lr=1e-3)
    for step in range(STEPS):
        encoder.reset_memory()
        tokens = torch.randn(BATCH, SEGMENTS * SEGMENT_LEN, DIM, generator=g).to(DEVICE)
        labels = torch.randint(0, 10, (BATCH,), generator=g).to(DEVICE)
        loss = 0.0
        for segment in tokens.split(SEGMENT_LEN, dim=1):
            h = encoder(segment)  # LEAK-ALLOC (the states forward caches)
            loss = loss + nn.functional.cross_entropy(head(h.mean(1)), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
    # What the memory keeps once it has been reset: nothing, unless the
    # reset hands back the list that kept every step's states.
    encoder.reset_memory()
    kept = encoder.mems
    retained = distinct_storage_bytes(kept)
    print(f"{len(kept)} cached states left after reset_memory(), retained {retained} bytes")
    write_truth(retained, "none" if fixed else "step_growth")


if __name__ == "__main__":
    main()
