"""A character-level GPT that learns two-digit addition, written the way
small teaching projects write it: the dataset enumerates every problem,
shuffles them once with randperm and keeps its split as a slice of that
permutation (the test split a 500-element view of a 10,000-element
tensor made in its constructor), a DataLoader with 2 workers and a
RandomSampler, AdamW with decoupled weight decay on the matrices only,
gradient clipping, and greedy-decoding evaluation every few iterations."""
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset, RandomSampler

NDIGIT = 2
DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


class AdditionDataset(Dataset):
    """a + b = c as digits: a, b, then c reversed (its low digit first)."""

    def __init__(self, split):
        num = (10 ** NDIGIT) ** 2
        perm = torch.randperm(num, generator=torch.Generator().manual_seed(1337))
        num_test = min(int(num * 0.2), 500)
        self.ixes = perm[:num_test] if split == "test" else perm[num_test:]

    def __len__(self):
        return self.ixes.nelement()

    def __getitem__(self, idx):
        idx = self.ixes[idx].item()
        a, b = idx // 10 ** NDIGIT, idx % 10 ** NDIGIT
        render = f"{a:0{NDIGIT}d}{b:0{NDIGIT}d}" + f"{a + b:0{NDIGIT + 1}d}"[::-1]
        dix = torch.tensor([int(s) for s in render], dtype=torch.long)
        x, y = dix[:-1].clone(), dix[1:].clone()
        y[:NDIGIT * 2 - 1] = -1  # predict only the sum's digits
        return x, y


class Block(nn.Module):
    def __init__(self, dim, heads, length):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.register_buffer("mask", torch.triu(torch.ones(length, length, dtype=torch.bool), 1))

    def forward(self, x):
        t = x.shape[1]
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=self.mask[:t, :t], need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab=10, dim=48, heads=3, layers=3, length=3 * NDIGIT):  # a, b, c less one
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.zeros(1, length, dim))
        self.blocks = nn.Sequential(*[Block(dim, heads, length) for _ in range(layers)])
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, idx, targets=None):
        x = self.tok(idx) + self.pos[:, :idx.shape[1]]
        logits = self.head(self.ln(self.blocks(x)))
        loss = None
        if targets is not None:
            loss = nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                               ignore_index=-1)
        return logits, loss

    @torch.no_grad()
    def generate(self, idx, new_tokens):
        for _ in range(new_tokens):
            logits, _ = self(idx)
            idx = torch.cat([idx, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
        return idx


def optimizer_groups(model, weight_decay):
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and not n.startswith("pos")]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2 or n.startswith("pos")]
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def evaluate(model, dataset, max_batches):
    model.eval()
    correct = total = 0
    factors = torch.tensor([10 ** i for i in range(NDIGIT + 1)][::-1], device=DEVICE)
    for b, (x, _) in enumerate(DataLoader(dataset, batch_size=100)):
        d1d2 = x[:, :NDIGIT * 2].to(DEVICE)
        out = model.generate(d1d2, NDIGIT + 1)[:, -(NDIGIT + 1):].flip(1)
        a = (d1d2[:, :NDIGIT] * factors[1:]).sum(1)
        b_ = (d1d2[:, NDIGIT:] * factors[1:]).sum(1)
        correct += ((out * factors).sum(1) == a + b_).sum().item()
        total += x.shape[0]
        if b + 1 >= max_batches:
            break
    model.train()
    return correct / total


def main():
    torch.manual_seed(3407)
    train, test = AdditionDataset("train"), AdditionDataset("test")
    model = GPT().to(DEVICE)
    opt = torch.optim.AdamW(optimizer_groups(model, 0.1), lr=5e-4, betas=(0.9, 0.95))
    loader = DataLoader(train, batch_size=64, num_workers=2,
                        sampler=RandomSampler(train, replacement=True, num_samples=64 * 60))
    for it, (x, y) in enumerate(loader):
        _, loss = model(x.to(DEVICE), y.to(DEVICE))
        model.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if it % 20 == 0:
            print(f"iter {it} loss {loss.item():.4f} test acc {evaluate(model, test, 2):.3f}")


if __name__ == "__main__":
    main()
