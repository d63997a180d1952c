"""One epoch of a plain training loop that keeps the epoch's detached
outputs to score the epoch at its end, in the two shapes training scripts
use: `train_one_epoch()` starts each epoch with `all_logits = []` (the
Kaggle-notebook shape), and the loop itself starts each pass with
`preds, targets = [], []` (a validation pass inlined in `main`). The lists
grow at every step of the epoch and are dropped when it ends; a run of one
epoch, a smoke test, sees only growth."""
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

# The GPU half runs it on CUDA (MEMLIFE_CORPUS_DEVICE=cuda).
DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))


def train_one_epoch(model, loader, opt):
    model.train()
    all_logits, all_targets = [], []
    for xb, yb in loader:
        xb, yb = xb.to(DEVICE), yb.to(DEVICE)
        logits = model(xb)
        loss = nn.functional.cross_entropy(logits, yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        all_logits.append(logits.detach())
        all_targets.append(yb)
    return (torch.cat(all_logits).argmax(1) == torch.cat(all_targets)).float().mean().item()


def main(epochs=1):
    torch.manual_seed(0)
    x = torch.randn(6144, 64)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).long()
    train = DataLoader(TensorDataset(x[:4096], y[:4096]), batch_size=64, shuffle=True)
    val = DataLoader(TensorDataset(x[4096:], y[4096:]), batch_size=64)
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 2)).to(DEVICE)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        train_acc = train_one_epoch(model, train, opt)
        model.eval()
        preds, targets = [], []
        with torch.no_grad():
            for xb, yb in val:
                preds.append(model(xb.to(DEVICE)).softmax(1)[:, 1])
                targets.append(yb.to(DEVICE))
        val_acc = ((torch.cat(preds) > 0.5).long() == torch.cat(targets)).float().mean().item()
        print(f"epoch {epoch}: train acc {train_acc:.3f}, val acc {val_acc:.3f}")


if __name__ == "__main__":
    main()
