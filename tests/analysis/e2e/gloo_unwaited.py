# Two gloo ranks (torch.multiprocessing spawn); each issues async
# all_reduces and waits them or not.
import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

ISSUES = 3


def rank_main(rank, world, store_path, mode):
    dist.init_process_group("gloo", init_method=f"file://{store_path}", rank=rank, world_size=world)
    w = torch.nn.Parameter(torch.ones(8))
    opt = torch.optim.SGD([w], lr=0.1)
    pending = []
    for step in range(3):
        if step == 1:
            for _ in range(ISSUES):
                t = torch.ones(1024) * rank
                work = dist.all_reduce(t, async_op=True)  # ISSUE_LINE
                pending.append((t, work))
                if mode == "waited":
                    work.wait()
        (w * 2).sum().backward()
        opt.step()
        opt.zero_grad()
    dist.barrier()
    if mode == "unwaited":
        # Let the collectives finish without telling c10d.
        import time
        time.sleep(0.5)
    dist.destroy_process_group()


if __name__ == "__main__":
    mode = sys.argv[1]
    store = os.path.join(tempfile.mkdtemp(), "store")
    mp.spawn(rank_main, args=(2, store, mode), nprocs=2, join=True)
