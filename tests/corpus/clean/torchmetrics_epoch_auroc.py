"""Epoch-level metrics with torchmetrics: AUROC and average precision keep
every batch's predictions until compute() and reset() at the epoch's end;
accuracy and a running mean loss keep sums."""
import os

import torch
import torch.nn as nn
from torchmetrics import MeanMetric
from torchmetrics.classification import BinaryAccuracy, BinaryAUROC, BinaryAveragePrecision

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 1)).to(DEVICE)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    auroc, ap, acc, mean_loss = (m.to(DEVICE) for m in (BinaryAUROC(), BinaryAveragePrecision(), BinaryAccuracy(), MeanMetric()))
    for epoch in range(3):
        for step in range(12):
            x = torch.randn(64, 20, device=DEVICE)
            y = (x[:, 0] + 0.5 * torch.randn(64, device=DEVICE) > 0).long()
            logits = model(x).squeeze(1)
            loss = nn.functional.binary_cross_entropy_with_logits(logits, y.float())
            opt.zero_grad()
            loss.backward()
            opt.step()
            probs = logits.detach().sigmoid()
            for metric in (auroc, ap, acc):
                metric.update(probs, y)
            mean_loss.update(loss.detach())
        print(epoch, float(auroc.compute()), float(ap.compute()), float(acc.compute()), float(mean_loss.compute()))
        for metric in (auroc, ap, acc, mean_loss):
            metric.reset()


if __name__ == "__main__":
    main()
