"""Gradient accumulation the HF accelerate way: Accelerator with
gradient_accumulation_steps=4, accelerator.accumulate(model) around each
micro-batch, accelerator.backward, clip_grad_norm_ when gradients sync, a
DataLoader and scheduler prepared by the accelerator."""
import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset
from _device import DEVICE  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    accelerator = Accelerator(gradient_accumulation_steps=4, cpu=DEVICE.type == "cpu")
    data = TensorDataset(torch.randn(256, 20), torch.randint(0, 3, (256,)))
    loader = DataLoader(data, batch_size=8, shuffle=True)
    model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 3))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.LinearLR(opt, start_factor=1.0, end_factor=0.1, total_iters=8)
    model, opt, loader, sched = accelerator.prepare(model, opt, loader, sched)
    for i, (x, y) in enumerate(loader):
        with accelerator.accumulate(model):
            loss = nn.functional.cross_entropy(model(x), y)
            accelerator.backward(loss)
            if accelerator.sync_gradients:
                accelerator.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
        if i % 8 == 0:
            print(i, round(loss.item(), 4))


if __name__ == "__main__":
    main()
