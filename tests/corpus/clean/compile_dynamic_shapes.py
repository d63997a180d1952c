"""torch.compile on batches whose sequence length changes every step (a
padded-to-bucket NLP loop): the first new length recompiles with a dynamic
dimension, later lengths reuse that graph."""
import os

import torch
import torch.nn as nn

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(100, 32)
        self.proj = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 5))

    def forward(self, tokens):
        h = self.emb(tokens)
        h = h - h.mean(dim=1, keepdim=True)
        return self.proj(h)


def main():
    torch.manual_seed(0)
    model = Tagger().to(DEVICE)
    compiled = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step, length in enumerate([16, 24, 32, 16, 40, 24, 48, 32, 16, 40]):
        tokens = torch.randint(0, 100, (4, length), device=DEVICE)
        tags = torch.randint(0, 5, (4, length), device=DEVICE)
        logits = compiled(tokens)
        loss = nn.functional.cross_entropy(logits.reshape(-1, 5), tags.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        print(step, length, round(loss.item(), 4))


if __name__ == "__main__":
    main()
