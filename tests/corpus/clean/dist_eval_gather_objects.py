# memlife-corpus: torchrun
"""Distributed evaluation as reference scripts do it: each rank scores its
shard, predictions gathered to rank 0 with gather_object, metric sums with
dist.reduce to rank 0, the decision (early stop) broadcast back; a training
step between evaluations overlaps an async broadcast of fresh buffers from
rank 0, waited before use."""
import torch
import torch.distributed as dist
import torch.nn as nn

from _device import init_distributed


def main():
    device = init_distributed()
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 3)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    table = torch.zeros(64, 16, device=device)
    for epoch in range(4):
        fresh = torch.randn(64, 16, device=device) if rank == 0 else torch.empty(64, 16, device=device)
        work = dist.broadcast(fresh, src=0, async_op=True)
        for _ in range(3):
            x, y = torch.randn(16, 16, device=device), torch.randint(0, 3, (16,), device=device)
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            for p in model.parameters():
                dist.all_reduce(p.grad)
                p.grad /= world
            opt.step()
        work.wait()
        table.copy_(fresh)
        with torch.no_grad():
            logits = model(table[rank::world])
            preds = logits.argmax(-1).tolist()
            sums = torch.tensor([float(len(preds)), float(sum(preds))], device=device)
        gathered = [None] * world if rank == 0 else None
        dist.gather_object(preds, gathered, dst=0)
        dist.reduce(sums, dst=0)
        stop = torch.tensor([0], device=device)
        if rank == 0:
            stop[0] = int(sum(len(g) for g in gathered) != int(sums[0].item()))
        dist.broadcast(stop, src=0)
        print(rank, epoch, int(stop.item()))
        if stop.item():
            break
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
