"""Stochastic weight averaging as the torch.optim.swa_utils docs show it:
an AveragedModel updated each epoch after swa_start, SWALR annealing, and
update_bn recomputing BatchNorm statistics over the loader at the end."""
import os

import torch
import torch.nn as nn
from torch.optim.swa_utils import SWALR, AveragedModel, update_bn
from torch.utils.data import DataLoader, TensorDataset

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(256, 20, device=DEVICE),
                         torch.randint(0, 3, (256,), device=DEVICE))
    loader = DataLoader(data, batch_size=32, shuffle=True)
    model = nn.Sequential(nn.Linear(20, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 3)).to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
    swa_model = AveragedModel(model)
    swa_scheduler = SWALR(opt, swa_lr=0.05)
    swa_start = 3
    for epoch in range(6):
        for x, y in loader:
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        if epoch >= swa_start:
            swa_model.update_parameters(model)
            swa_scheduler.step()
        else:
            scheduler.step()
    update_bn(loader, swa_model)
    with torch.no_grad():
        print("swa out", swa_model(torch.randn(4, 20, device=DEVICE)).argmax(1).tolist())


if __name__ == "__main__":
    main()
