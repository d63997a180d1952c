# memlife-corpus: expect=use_before_wait
# memlife-corpus: torchrun
# source: https://github.com/pytorch/pytorch/issues/147168
# source: https://discuss.pytorch.org/t/synchronization-mechanism-with-different-iteration-counts-of-for-loop/94234/4
# Summary: async all_reduce is used to overlap communication with compute
# ("run the dist.all_reduce ... async_op=True. Then only wait for it when you
# need the result", forum #94234); the example in #147168 issues
# dist.all_reduce(t, async_op=True), keeps computing and then reads t
# (print(t)) without ever calling wait(). Here a hand-rolled data-parallel
# loop launches one async all_reduce per gradient and calls optimizer.step()
# -- which reads every gradient -- before waiting the handles (and clips
# the gradients, another read, before that).
#
# Run: python3 -m torch.distributed.run --standalone --nproc_per_node=2 <file>
# Leaky: clip + step() before wait().  --fixed: wait() every handle, then
# clip + step().
# Ground-truth bytes: the gradient bytes read before their all_reduce was
# waited, per step, on one rank (not a leak: a correctness bug on a
# collective output). The GPU half runs it over NCCL
# (MEMLIFE_CORPUS_DEVICE=cuda), where the read is a real race: the
# optimizer's kernels on the compute stream are not ordered after the
# all-reduce on NCCL's stream until wait().
import sys

import torch
import torch.distributed as dist
import torch.nn as nn

from _device import init_distributed
from _truth import write_truth

STEPS = 8


def main():
    fixed = "--fixed" in sys.argv
    device = init_distributed()
    rank = dist.get_rank()
    world = dist.get_world_size()
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1 + rank)
    model = nn.Sequential(nn.Linear(128, 512), nn.ReLU(), nn.Linear(512, 10)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    read_before_wait = 0
    for step in range(STEPS):
        x = torch.randn(64, 128, generator=g).to(device)
        y = torch.randint(0, 10, (64,), generator=g).to(device)
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        handles = []
        for p in model.parameters():
            p.grad.div_(world)
            handles.append(dist.all_reduce(p.grad, async_op=True))  # LEAK-ALLOC (collective output: the grad)
        if not fixed:
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # LEAK-HOLD (reads the grads before wait)
            opt.step()  # LEAK-HOLD (reads the grads before wait)
            read_before_wait = sum(p.grad.untyped_storage().nbytes() for p in model.parameters())
        for h in handles:
            h.wait()
        if fixed:
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
    if rank == 0:
        print("gradient bytes read before wait (last step): %d" % read_before_wait)
    write_truth(read_before_wait, "none" if fixed else "use_before_wait", rank0_only=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
