"""DataLoader workers started with fork or spawn, while the main thread records."""
import sys

import torch
from torch.utils.data import DataLoader, Dataset


class Squares(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        return torch.full((16,), float(i)) ** 2


def main(method):
    loader = DataLoader(Squares(), batch_size=8, num_workers=2, multiprocessing_context=method)
    total = 0.0
    for batch in loader:
        total += batch.sum().item()
    print(f"total {total}")


if __name__ == "__main__":
    main(sys.argv[1])
