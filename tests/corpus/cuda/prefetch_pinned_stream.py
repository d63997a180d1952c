"""GPU only. A DataLoader with pinned memory and workers, batches copied
to the GPU ahead of use on a side stream (non_blocking), handed to the
compute stream with wait_stream and record_stream, as the classic CUDA
prefetcher (NVIDIA's apex/ImageNet examples) does."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Prefetcher:
    def __init__(self, loader, device):
        self.it, self.device = iter(loader), device
        self.stream = torch.cuda.Stream()
        self.preload()

    def preload(self):
        try:
            x, y = next(self.it)
        except StopIteration:
            self.next = None
            return
        with torch.cuda.stream(self.stream):
            self.next = (x.to(self.device, non_blocking=True), y.to(self.device, non_blocking=True))

    def __iter__(self):
        return self

    def __next__(self):
        torch.cuda.current_stream().wait_stream(self.stream)
        batch = self.next
        if batch is None:
            raise StopIteration
        for t in batch:
            t.record_stream(torch.cuda.current_stream())
        self.preload()
        return batch


def main():
    torch.manual_seed(0)
    device = torch.device("cuda")
    data = TensorDataset(torch.randn(2048, 3, 32, 32), torch.randint(0, 10, (2048,)))
    loader = DataLoader(data, batch_size=64, shuffle=True, num_workers=2, pin_memory=True,
                        persistent_workers=True)
    model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4),
                          nn.Flatten(), nn.Linear(32 * 16, 10)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(2):
        for x, y in Prefetcher(loader, device):
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    torch.cuda.synchronize()
    print("loss", loss.item())


if __name__ == "__main__":
    main()
