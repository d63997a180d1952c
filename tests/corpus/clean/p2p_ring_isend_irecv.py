# memlife-corpus: torchrun
"""A ring all-reduce written by hand with point-to-point operations, as
tutorials on torch.distributed do it: each step posts isend to the next rank
and irecv from the previous one (also batched with batch_isend_irecv), waits
both requests, and accumulates; used to average gradients after backward."""
import torch
import torch.distributed as dist
import torch.nn as nn


def ring_all_reduce(t, batched):
    rank, world = dist.get_rank(), dist.get_world_size()
    send_buf = t.clone()
    recv_buf = torch.empty_like(t)
    total = t.clone()
    for _ in range(world - 1):
        if batched:
            ops = [dist.P2POp(dist.isend, send_buf, (rank + 1) % world),
                   dist.P2POp(dist.irecv, recv_buf, (rank - 1) % world)]
            for req in dist.batch_isend_irecv(ops):
                req.wait()
        else:
            send = dist.isend(send_buf, (rank + 1) % world)
            recv = dist.irecv(recv_buf, (rank - 1) % world)
            send.wait()
            recv.wait()
        total += recv_buf
        send_buf, recv_buf = recv_buf, send_buf
    return total


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(dist.get_rank())
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
    for p in model.parameters():
        dist.broadcast(p.data, 0)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(8):
        x, y = torch.randn(16, 32), torch.randint(0, 4, (16,))
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        for p in model.parameters():
            p.grad.copy_(ring_all_reduce(p.grad, batched=step % 2 == 1) / dist.get_world_size())
        opt.step()
    check = model[0].weight.sum().reshape(1)
    gathered = [torch.empty_like(check) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, check)
    if dist.get_rank() == 0:
        print("replicas agree:", torch.allclose(gathered[0], gathered[1]))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
