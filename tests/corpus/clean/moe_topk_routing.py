"""A mixture-of-experts layer with top-2 routing (Switch/Mixtral style):
each step every expert gets a different number of tokens (index_select,
then index_add_ back), plus a load-balancing auxiliary loss."""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half
DIM, EXPERTS, TOPK = 32, 4, 2


class MoE(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(DIM, EXPERTS, bias=False)
        self.experts = nn.ModuleList(nn.Sequential(nn.Linear(DIM, 64), nn.SiLU(), nn.Linear(64, DIM))
                                     for _ in range(EXPERTS))

    def forward(self, x):
        probs = self.gate(x).softmax(dim=-1)
        weights, chosen = probs.topk(TOPK, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            token, slot = (chosen == e).nonzero(as_tuple=True)
            if token.numel() == 0:
                continue
            y = expert(x.index_select(0, token)) * weights[token, slot].unsqueeze(-1)
            out = out.index_add(0, token, y)
        load = F.one_hot(chosen[:, 0], EXPERTS).float().mean(0)
        aux = EXPERTS * (load * probs.mean(0)).sum()
        return out, aux


def main():
    torch.manual_seed(0)
    model = nn.ModuleDict({"moe": MoE(), "head": nn.Linear(DIM, 3)}).to(DEVICE)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    for step in range(15):
        x = torch.randn(64, DIM, device=DEVICE)
        y = torch.randint(0, 3, (64,), device=DEVICE)
        h, aux = model["moe"](x)
        loss = F.cross_entropy(model["head"](h + x), y) + 0.01 * aux
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(step, round(loss.item(), 4))


if __name__ == "__main__":
    main()
