"""A short run, as one checks a training script for leaks: half an epoch
(max_steps) over a Dataset that memoizes its preprocessed samples on first
use, in a dict keyed by sample index. Every step preprocesses new samples,
so the cache grows at every step of the run; it is bounded by the dataset's
length, and a later epoch would add nothing (dataset_memo_cache.py runs
three)."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from _device import DEVICE  # cuda on the GPU half

MAX_STEPS = 48


class Normalized(Dataset):
    def __init__(self, n):
        self.raw = torch.randn(n, 3, 32, 32)
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
    data = Normalized(2048)
    loader = DataLoader(data, batch_size=16, shuffle=True)
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 64), nn.ReLU(), nn.Linear(64, 10)).to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for step, (x, y) in enumerate(loader, start=1):
        x, y = x.to(DEVICE), y.to(DEVICE)
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step == MAX_STEPS:
            break
    print("cached", len(data.cache), "of", len(data))


if __name__ == "__main__":
    main()
