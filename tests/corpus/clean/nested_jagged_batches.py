"""Variable-length sequences as nested jagged tensors (torch.nested, layout
torch.jagged): projections, layer norm and a padded attention on the jagged
batch, a mean pool per sequence, trained with backward through the nested
tensor. (SDPA on a jagged CPU tensor asks CUDA about cuDNN and fails on a
machine without a driver, so the attention runs on the padded batch.)"""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


class JaggedEncoder(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, 2)

    def forward(self, x):  # x: nested (B, j, D)
        h = F.layer_norm(F.gelu(self.qkv(x)), (self.qkv.out_features,))
        padded = h.to_padded_tensor(0.0)  # (B, max_len, 3D)
        q, k, v = padded.chunk(3, dim=-1)
        lengths = x.offsets().diff()
        keep = torch.arange(padded.size(1), device=padded.device)[None, :] < lengths[:, None]
        mask = keep[:, None, :].expand(-1, padded.size(1), -1)
        split = lambda t: t.unflatten(-1, [self.heads, -1]).transpose(1, 2)
        attn = F.scaled_dot_product_attention(split(q), split(k), split(v), attn_mask=mask[:, None])
        y = self.out(attn.transpose(1, 2).flatten(-2))
        pooled = (y * keep[..., None]).sum(1) / lengths[:, None]
        return self.head(pooled)


def main():
    torch.manual_seed(0)
    model = JaggedEncoder().to(DEVICE)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(10):
        lengths = torch.randint(3, 12, (6,)).tolist()
        batch = torch.nested.nested_tensor([torch.randn(n, 32, device=DEVICE) for n in lengths], layout=torch.jagged)
        labels = torch.randint(0, 2, (6,), device=DEVICE)
        loss = F.cross_entropy(model(batch), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(step, round(loss.item(), 4))


if __name__ == "__main__":
    main()
