# memlife-corpus: expect=unwaited_collective
# memlife-corpus: torchrun
# source: https://github.com/pytorch/pytorch/issues/147168
# Summary: in #147168 (FSDP2 over-allocating because c10d stashes tensors
# until the work is waited) kwen2501 gives the pattern of a user who never
# calls wait(): dist.all_reduce(t, async_op=True) is issued for overlap and
# the work handle is not waited, so c10d/the handle keep the tensor alive
# ("If watchdog does the unstash in this case, then we won't have a memory
# leak"). Here each step all-reduces a 256 KiB metrics buffer asynchronously
# and parks the work handle in a list that is never waited.
#
# Run: python3 -m torch.distributed.run --standalone --nproc_per_node=2 <file>
# Leaky: handles kept, never waited.  --fixed: work.wait() before the next
# step, buffer folded into a running total and dropped.
# The GPU half runs it over NCCL (MEMLIFE_CORPUS_DEVICE=cuda).
import sys

import torch
import torch.distributed as dist
import torch.nn as nn

from _device import init_distributed
from _truth import write_truth

STEPS = 10
NCLS = 256


def main():
    fixed = "--fixed" in sys.argv
    device = init_distributed()
    rank = dist.get_rank()
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1 + rank)
    model = nn.Linear(64, NCLS).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    pending = []
    total = torch.zeros(NCLS, NCLS, device=device)
    for step in range(STEPS):
        x = torch.randn(32, 64, generator=g).to(device)
        y = torch.randint(0, NCLS, (32,), generator=g).to(device)
        opt.zero_grad(set_to_none=True)
        logits = model(x)
        loss = nn.functional.cross_entropy(logits, y)
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= dist.get_world_size()
        opt.step()
        # confusion-matrix counts, reduced across ranks for logging
        confusion = torch.zeros(NCLS, NCLS, device=device)  # LEAK-ALLOC (256 KiB per step)
        confusion.index_put_((y, logits.argmax(1)), torch.ones(32, device=device), accumulate=True)
        work = dist.all_reduce(confusion, async_op=True)  # LEAK-ISSUE (async, never waited)
        if fixed:
            work.wait()
            total += confusion
        else:
            pending.append((work, confusion))  # LEAK-HOLD (never waited)
        del confusion, work
    retained = sum(c.untyped_storage().nbytes() for _, c in pending)
    if rank == 0:
        print("unwaited all_reduce handles: %d, %d bytes" % (len(pending), retained))
    write_truth(retained, "none" if fixed else "unwaited_collective", rank0_only=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
