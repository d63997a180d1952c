"""One epoch of fine-tuning scored with scikit-learn, the most common way
to get an epoch's AUROC: each step appends `probs.cpu().numpy()` and the
targets' arrays to lists made at the epoch's start, and after the last
batch `roc_auc_score` and `classification_report` read their concatenation.
On the CPU, `.numpy()` shares the tensor's memory: each array keeps its
batch's storage until the epoch's lists go, one epoch's worth by design."""
import os

import numpy as np
import torch
import torch.nn as nn
from sklearn.metrics import classification_report, roc_auc_score
from torch.utils.data import DataLoader, TensorDataset

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def train_one_epoch(model, opt, loader):
    model.train()
    epoch_probs, epoch_targets = [], []
    for xb, yb in loader:
        xb, yb = xb.to(DEVICE), yb.to(DEVICE)
        logits = model(xb).squeeze(1)
        loss = nn.functional.binary_cross_entropy_with_logits(logits, yb.float())
        opt.zero_grad()
        loss.backward()
        opt.step()
        epoch_probs.append(logits.detach().sigmoid().cpu().numpy())
        epoch_targets.append(yb.cpu().numpy())
    probs, targets = np.concatenate(epoch_probs), np.concatenate(epoch_targets)
    print(classification_report(targets, probs > 0.5, digits=3))
    return roc_auc_score(targets, probs)


def main():
    torch.manual_seed(0)
    x = torch.randn(3200, 20)
    y = (x[:, :4].sum(1) + 0.5 * torch.randn(3200) > 0).long()
    loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True)
    model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, 1)).to(DEVICE)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(1):  # a one-epoch fine-tuning run
        print(f"epoch {epoch} AUROC {train_one_epoch(model, opt, loader):.3f}")


if __name__ == "__main__":
    main()
