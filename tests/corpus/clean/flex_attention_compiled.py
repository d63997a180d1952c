"""FlexAttention as its blog post uses it: a causal block mask built with
create_block_mask, a score_mod adding a relative-position bias, and
flex_attention compiled with torch.compile, trained for a few steps on a
GPU; on the CPU (where FlexAttention has no backward) the same block serves
inference batches."""
import os

import torch
import torch.nn as nn
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half
compiled_flex = torch.compile(flex_attention)


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def relative_bias(score, b, h, q_idx, kv_idx):
    return score - 0.01 * (q_idx - kv_idx).abs()


class FlexBlock(nn.Module):
    def __init__(self, dim=64, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x, mask):
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        y = compiled_flex(q, k, v, score_mod=relative_bias, block_mask=mask)
        return self.out(y.transpose(1, 2).reshape(b, s, d))


def main():
    torch.manual_seed(0)
    seq = 128
    mask = create_block_mask(causal, B=None, H=None, Q_LEN=seq, KV_LEN=seq, device=DEVICE)
    model = FlexBlock().to(DEVICE)
    if DEVICE.type != "cuda":
        with torch.no_grad():
            for step in range(6):
                print(step, model(torch.randn(2, seq, 64), mask).norm().item() > 0)
        return
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(6):
        x = torch.randn(2, seq, 64, device=DEVICE)
        loss = (model(x, mask) - x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(step, round(loss.item(), 4))


if __name__ == "__main__":
    main()
