# memlife-corpus: torchrun
"""Pipeline parallelism with torch.distributed.pipelining: a model split in
two stages, one per rank, trained with the GPipe schedule over 4
micro-batches (activations and gradients sent point to point)."""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.pipelining import PipelineStage, ScheduleGPipe

from _device import init_distributed


def main():
    device = init_distributed()
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    d, micro, batch = 32, 4, 16
    layers = [nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d)) for _ in range(world)]
    stage_module = layers[rank].to(device)
    stage = PipelineStage(stage_module, rank, world, device)
    loss_fn = nn.MSELoss()
    schedule = ScheduleGPipe(stage, n_microbatches=micro, loss_fn=loss_fn)
    opt = torch.optim.SGD(stage_module.parameters(), lr=0.05)
    for step in range(8):
        torch.manual_seed(100 + step)
        x = torch.randn(batch, d, device=device)
        target = torch.randn(batch, d, device=device)
        if rank == 0:
            schedule.step(x)
        else:
            losses = []
            schedule.step(target=target, losses=losses)
        opt.step()
        opt.zero_grad(set_to_none=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
