"""One epoch of a multiclass classifier scored at its end with torcheval,
PyTorch's own metrics library, and no reset: the epoch's macro AUROC, F1
and mean loss are updated at each step and computed once after the last
batch. MulticlassAUROC keeps every batch's scores and targets until it is
computed, by design (torcheval keeps no update count: memlife counts the
updates itself); nothing is added after the compute, so nothing grows on."""
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torcheval.metrics import Mean, MulticlassAUROC, MulticlassF1Score

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half
CLASSES = 5


def main():
    torch.manual_seed(0)
    x = torch.randn(3072, 32)
    y = (x[:, :CLASSES] + 0.5 * torch.randn(3072, CLASSES)).argmax(1)
    loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True)
    model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, CLASSES)).to(DEVICE)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    auroc = MulticlassAUROC(num_classes=CLASSES, average="macro", device=DEVICE)
    f1 = MulticlassF1Score(num_classes=CLASSES, average="macro", device=DEVICE)
    mean_loss = Mean(device=DEVICE)
    model.train()
    for step, (xb, yb) in enumerate(loader):
        xb, yb = xb.to(DEVICE), yb.to(DEVICE)
        logits = model(xb)
        loss = nn.functional.cross_entropy(logits, yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        scores = logits.detach().softmax(1)
        auroc.update(scores, yb)
        f1.update(scores, yb)
        mean_loss.update(loss.detach(), weight=len(yb))
        if step % 12 == 0:
            print(f"step {step} loss {loss.item():.3f}")
    print(f"epoch loss {mean_loss.compute().item():.3f} macro AUROC {auroc.compute().item():.3f} "
          f"macro F1 {f1.compute().item():.3f}")


if __name__ == "__main__":
    main()
