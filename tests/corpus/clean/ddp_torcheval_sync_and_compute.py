# memlife-corpus: torchrun
"""One epoch of DDP scored with torcheval the way its documentation does it
in distributed training: each rank updates its own metrics at every step,
and after the epoch `torcheval.metrics.toolkit.sync_and_compute` gathers
every rank's states and computes them on rank 0. The metrics themselves are
never computed (the merged copy is) and never reset: the run ends there.
BinaryAUROC keeps each batch's scores until then, by design."""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
from torcheval.metrics import BinaryAUROC, BinaryAccuracy
from torcheval.metrics.toolkit import sync_and_compute, sync_and_compute_collection

from _device import init_distributed


def main():
    device = init_distributed()
    rank = dist.get_rank()
    torch.manual_seed(0)
    x = torch.randn(2048, 16)
    y = (x[:, :2].sum(1) + 0.4 * torch.randn(2048) > 0).float()
    dataset = TensorDataset(x, y)
    loader = DataLoader(dataset, batch_size=32, sampler=DistributedSampler(dataset, shuffle=True, seed=0))
    model = DDP(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)).to(device),
                device_ids=[device.index] if device.type == "cuda" else None)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    auroc = BinaryAUROC(device=device)
    metrics = {"accuracy": BinaryAccuracy(device=device), "auroc": BinaryAUROC(device=device)}
    for step, (xb, yb) in enumerate(loader):
        xb, yb = xb.to(device), yb.to(device)
        logits = model(xb).squeeze(1)
        loss = nn.functional.binary_cross_entropy_with_logits(logits, yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        probs = logits.detach().sigmoid()
        auroc.update(probs, yb)
        for metric in metrics.values():
            metric.update(probs, yb)
        if step % 8 == 0:
            print(rank, step, round(loss.item(), 4))
    epoch_auroc = sync_and_compute(auroc)
    scores = sync_and_compute_collection(metrics)
    if rank == 0:
        print(f"epoch AUROC {epoch_auroc.item():.3f} accuracy {scores['accuracy'].item():.3f}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
