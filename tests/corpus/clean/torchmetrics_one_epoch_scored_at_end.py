"""One epoch of fine-tuning scored at its end with torchmetrics, no reset:
the run's AUROC from update() at each step and its average precision from
the metric's forward() (the batch's value, logged at each step), both
computed once after the last batch. List-state metrics keep every batch
until they are computed, by design; nothing is added after the compute,
so nothing grows on (a metric computed and then updated again without a
reset does: leaky/torchmetrics_never_reset.py)."""
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torchmetrics.classification import BinaryAUROC, BinaryAveragePrecision

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    x = torch.randn(2560, 24)
    y = (x[:, :3].sum(1) + 0.3 * torch.randn(2560) > 0).long()
    loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True)
    model = nn.Sequential(nn.Linear(24, 48), nn.ReLU(), nn.Linear(48, 1)).to(DEVICE)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    auroc = BinaryAUROC().to(DEVICE)
    average_precision = BinaryAveragePrecision().to(DEVICE)
    for step, (xb, yb) in enumerate(loader):
        xb, yb = xb.to(DEVICE), yb.to(DEVICE)
        logits = model(xb).squeeze(1)
        loss = nn.functional.binary_cross_entropy_with_logits(logits, yb.float())
        opt.zero_grad()
        loss.backward()
        opt.step()
        probs = logits.detach().sigmoid()
        auroc.update(probs, yb)
        batch_ap = average_precision(probs, yb)
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.3f} batch AP {batch_ap.item():.3f}")
    print(f"epoch AUROC {auroc.compute().item():.3f} AP {average_precision.compute().item():.3f}")


if __name__ == "__main__":
    main()
