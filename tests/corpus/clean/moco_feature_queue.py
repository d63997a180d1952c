"""Contrastive learning with a momentum encoder and a queue of negatives
(MoCo): the queue is a fixed buffer overwritten in place; beside it a
bounded deque (maxlen) keeps the last few batches' detached embeddings for
a nearest-neighbour monitor. Both stop growing once full."""
import collections
import copy
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half
DIM, QUEUE, BATCH, RECENT = 32, 256, 32, 4


class MoCo(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder_q = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, DIM))
        self.encoder_k = copy.deepcopy(self.encoder_q)
        for p in self.encoder_k.parameters():
            p.requires_grad = False
        self.register_buffer("queue", F.normalize(torch.randn(DIM, QUEUE), dim=0))
        self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

    @torch.no_grad()
    def momentum_update(self, m=0.99):
        for pq, pk in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            pk.data = pk.data * m + pq.data * (1.0 - m)

    @torch.no_grad()
    def enqueue(self, keys):
        ptr = int(self.queue_ptr)
        self.queue[:, ptr:ptr + keys.shape[0]] = keys.T
        self.queue_ptr[0] = (ptr + keys.shape[0]) % QUEUE

    def forward(self, xq, xk):
        q = F.normalize(self.encoder_q(xq), dim=1)
        with torch.no_grad():
            self.momentum_update()
            k = F.normalize(self.encoder_k(xk), dim=1)
        l_pos = torch.einsum("nc,nc->n", q, k).unsqueeze(-1)
        l_neg = torch.einsum("nc,ck->nk", q, self.queue.clone().detach())
        logits = torch.cat([l_pos, l_neg], dim=1) / 0.07
        self.enqueue(k)
        return logits, q


def main():
    torch.manual_seed(0)
    model = MoCo().to(DEVICE)
    opt = torch.optim.SGD(model.encoder_q.parameters(), lr=0.03, momentum=0.9)
    recent = collections.deque(maxlen=RECENT)
    for step in range(14):
        x = torch.randn(BATCH, 64, device=DEVICE)
        logits, q = model(x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x))
        loss = F.cross_entropy(logits, torch.zeros(BATCH, dtype=torch.long, device=DEVICE))
        opt.zero_grad()
        loss.backward()
        opt.step()
        recent.append(q.detach())
        bank = torch.cat(list(recent))
        nn_sim = (q.detach() @ bank.T).max(dim=1).values.mean()
        print(step, round(loss.item(), 3), round(nn_sim.item(), 3))


if __name__ == "__main__":
    main()
