"""torch.compile with compiled autograd (torch._dynamo.config.compiled_autograd):
the backward graph is captured and compiled too, as the compiled autograd
tutorial shows, for a small transformer encoder trained with AdamW."""
import os

import torch
import torch.nn as nn

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    torch._dynamo.config.compiled_autograd = True
    layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, batch_first=True,
                                       dropout=0.0)
    model = nn.Sequential(nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False),
                          nn.Linear(64, 8)).to(DEVICE)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    @torch.compile
    def train_step(x, y):
        loss = nn.functional.cross_entropy(model(x).mean(1), y)
        loss.backward()
        return loss

    for step in range(6):
        x = torch.randn(4, 16, 64, device=DEVICE)
        y = torch.randint(0, 8, (4,), device=DEVICE)
        opt.zero_grad()
        loss = train_step(x, y)
        opt.step()
        print(step, round(loss.item(), 4))


if __name__ == "__main__":
    main()
