# memlife-corpus: torchrun
"""Collectives on subgroups as hybrid-parallel code sets them up: new_group
for each rank alone and for all ranks, new_subgroups by enumeration, an
async all_reduce on a subgroup waited later, reduce_scatter_tensor and
all_gather_into_tensor on the world group, monitored_barrier."""
import datetime

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    singles = [dist.new_group([r]) for r in range(world)]
    everyone = dist.new_group(list(range(world)))
    mine, _ = dist.new_subgroups_by_enumeration([[r] for r in range(world)])
    model = nn.Linear(16, 16)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(6):
        opt.zero_grad()
        model(torch.randn(8, 16)).pow(2).mean().backward()
        # The bias's reduction on this rank's own group overlaps the
        # weight's reduce-scatter and all-gather on the world group.
        local = dist.all_reduce(model.bias.grad, group=singles[rank], async_op=True)
        shard = torch.empty(16 * 16 // world)
        dist.reduce_scatter_tensor(shard, model.weight.grad.reshape(-1).clone(), group=everyone)
        full = torch.empty(16 * 16)
        dist.all_gather_into_tensor(full, shard)
        model.weight.grad.copy_(full.view(16, 16) / world)
        local.wait()
        dist.all_reduce(model.bias.grad, group=mine)
        opt.step()
    dist.monitored_barrier(timeout=datetime.timedelta(seconds=60))
    if rank == 0:
        print("done", round(model.weight.norm().item(), 4))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
