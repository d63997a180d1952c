"""A Dataset that memoizes its preprocessed samples (a dict filled during
the first epoch, bounded by the dataset's length), trained for 3 epochs."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from _device import DEVICE  # cuda on the GPU half


class Preprocessed(Dataset):
    def __init__(self, n):
        self.raw = torch.randn(n, 3, 16, 16)
        self.labels = torch.randint(0, 10, (n,))
        self.cache = {}

    def __len__(self):
        return len(self.raw)

    def __getitem__(self, i):
        if i not in self.cache:
            x = self.raw[i]
            self.cache[i] = (x - x.mean()) / (x.std() + 1e-5)
        return self.cache[i], self.labels[i]


def main():
    torch.manual_seed(0)
    data = Preprocessed(256)
    loader = DataLoader(data, batch_size=16, shuffle=True)
    model = nn.Sequential(nn.Flatten(), nn.Linear(768, 64), nn.ReLU(), nn.Linear(64, 10)).to(DEVICE)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        for x, y in loader:
            x, y = x.to(DEVICE), y.to(DEVICE)
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    print("cached", len(data.cache))


if __name__ == "__main__":
    main()
