"""Train torchvision's resnet18 (10 classes, random init) on random 32x32 images
with SGD + momentum, loading batches with DataLoader(num_workers=2)."""
import os

import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader, TensorDataset

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    images = torch.randn(48, 3, 32, 32)
    labels = torch.randint(0, 10, (48,))
    loader = DataLoader(TensorDataset(images, labels), batch_size=8, shuffle=True, num_workers=2)

    model = torchvision.models.resnet18(num_classes=10).to(DEVICE)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)

    model.train()
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        out = model(x.to(DEVICE))
        loss = criterion(out, y.to(DEVICE))
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
