# gloo ranks on CPU, launched by torchrun or by torch.multiprocessing spawn.
#   python ranks.py torchrun MODE          (under torchrun: one process per rank)
#   python ranks.py spawn MODE WORLD       (spawns WORLD ranks itself)
# MODE: clean     every async all_reduce waited
#       unwaited  ISSUES async all_reduces per rank, never waited
#       mismatch  rank 1 skips the second all_reduce; the others time out
import os
import sys
import tempfile
from datetime import timedelta

import torch
import torch.distributed as dist

ISSUES = 3


def rank_main(rank, world, init, mode):
    kwargs = {"timeout": timedelta(seconds=5)}
    if init:
        dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world, **kwargs)
    else:
        dist.init_process_group("gloo", **kwargs)
    rank = dist.get_rank()
    t = torch.ones(1024)
    if mode == "mismatch":
        for k in range(3):
            if rank == 1 and k == 1:
                continue  # SKIPPED_LINE
            dist.all_reduce(t)  # REDUCE_LINE
        dist.barrier()  # BARRIER_LINE
        dist.destroy_process_group()
        return
    pending = []
    for _ in range(ISSUES):
        x = torch.ones(256) * rank
        work = dist.all_reduce(x, async_op=True)  # ISSUE_LINE
        pending.append((x, work))
        if mode == "clean":
            work.wait()
    dist.all_reduce(t)
    dist.barrier()
    if mode == "unwaited":
        import time
        time.sleep(0.3)  # let the works finish without telling c10d
    dist.destroy_process_group()


if __name__ == "__main__":
    launcher, mode = sys.argv[1], sys.argv[2]
    if launcher == "torchrun":
        rank_main(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), None, mode)
    else:
        import torch.multiprocessing as mp

        world = int(sys.argv[3])
        init = "file://" + os.path.join(tempfile.mkdtemp(), "store")
        mp.spawn(rank_main, args=(world, init, mode), nprocs=world, join=True)
