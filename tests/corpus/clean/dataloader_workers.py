"""A small CNN trained on a map-style Dataset loaded by persistent DataLoader workers."""
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


class SyntheticShapes(Dataset):
    """Deterministic per-index synthetic images: item i is generated from seed i."""

    def __init__(self, n=160, size=28, num_classes=4):
        self.n, self.size, self.num_classes = n, size, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        g = torch.Generator().manual_seed(idx)
        label = idx % self.num_classes
        img = torch.randn(1, self.size, self.size, generator=g) * 0.5
        img[:, label * 6:(label + 1) * 6, :] += 1.0  # a class-dependent band
        return img, label


class SmallCNN(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.classifier = nn.Linear(16 * 7 * 7, num_classes)

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


def main():
    torch.manual_seed(0)
    loader = DataLoader(
        SyntheticShapes(),
        batch_size=16,
        shuffle=True,
        num_workers=2,
        persistent_workers=True,
        pin_memory=False,
    )
    model = SmallCNN().to(DEVICE)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()

    model.train()
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        loss = loss_fn(model(x.to(DEVICE)), y.to(DEVICE))
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
