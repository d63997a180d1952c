# memlife-corpus: torchrun
"""Expert parallelism (GShard/DeepSpeed-MoE style): each rank holds one
expert; tokens are routed with all_to_all_single using uneven split sizes
exchanged first with an all_to_all of the counts, processed by the local
expert, sent back, and the gradients flow back through the same exchange
(torch.distributed.nn.functional.all_to_all_single). Expert gradients stay
local; the shared router's are averaged with all_reduce."""
import torch
import torch.distributed as dist
import torch.distributed.nn.functional as distnn
import torch.nn as nn

from _device import init_distributed

DIM = 32


def main():
    device = init_distributed()
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    router = nn.Linear(DIM, world).to(device)
    torch.manual_seed(1 + rank)
    expert = nn.Sequential(nn.Linear(DIM, 64), nn.ReLU(), nn.Linear(64, DIM)).to(device)
    opt = torch.optim.SGD(list(router.parameters()) + list(expert.parameters()), lr=0.05)
    for step in range(8):
        x = torch.randn(40 + 4 * rank, DIM, device=device)
        gate = router(x).softmax(-1)
        dest = gate.argmax(-1)
        order = dest.argsort()
        send_counts = torch.bincount(dest, minlength=world)
        recv_counts = torch.empty_like(send_counts)
        dist.all_to_all_single(recv_counts, send_counts)
        send, recv = send_counts.tolist(), recv_counts.tolist()
        tokens = distnn.all_to_all_single(torch.empty(sum(recv), DIM, device=device), x[order], recv, send)
        back = distnn.all_to_all_single(torch.empty(x.shape[0], DIM, device=device), expert(tokens), send, recv)
        out = torch.empty_like(back).index_copy(0, order, back) * gate.max(-1).values.unsqueeze(-1)
        loss = (out - x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        for p in router.parameters():
            dist.all_reduce(p.grad)
            p.grad /= world
        opt.step()
        print(rank, step, round(loss.item(), 4))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
