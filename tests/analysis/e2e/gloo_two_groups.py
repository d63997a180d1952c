# Two gloo ranks (torch.multiprocessing spawn) and two groups: the default
# one, on which both ranks all-reduce a gradient (c10d), and a second one
# (new_group, as a tensor- beside a data-parallel group), on which each
# rank all-reduces an activation through a functional collective, waited
# at the step's end. Rank 0 issues the functional one first, rank 1 last:
# each group's order is the same on both ranks, only their interleaving
# differs.
import os
import tempfile

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
import torch.multiprocessing as mp


def rank_main(rank, world, store_path):
    dist.init_process_group("gloo", init_method=f"file://{store_path}", rank=rank, world_size=world)
    second = dist.new_group(backend="gloo")

    def activation_all_reduce():
        return funcol.all_reduce(torch.ones(1024), "sum", second)

    for step in range(3):
        if rank == 0:
            activation = activation_all_reduce()
        dist.all_reduce(torch.ones(256))
        if rank == 1:
            activation = activation_all_reduce()
        funcol.wait_tensor(activation)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    store = os.path.join(tempfile.mkdtemp(), "store")
    mp.spawn(rank_main, args=(2, store), nprocs=2, join=True)
