"""A training loop on HF accelerate's Accelerator: prepare(),
gradient accumulation with accelerator.accumulate(), clip_grad_norm_,
a scheduler, and evaluation with gather_for_metrics."""
import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset
from _device import DEVICE  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    accelerator = Accelerator(cpu=DEVICE.type == "cpu", gradient_accumulation_steps=2)
    x, y = torch.randn(256, 20), torch.randint(0, 3, (256,))
    train = DataLoader(TensorDataset(x[:192], y[:192]), batch_size=16, shuffle=True)
    evaluation = DataLoader(TensorDataset(x[192:], y[192:]), batch_size=16)
    model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 3))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)
    model, opt, train, evaluation, sched = accelerator.prepare(model, opt, train, evaluation, sched)
    for epoch in range(2):
        model.train()
        for xb, yb in train:
            with accelerator.accumulate(model):
                loss = nn.functional.cross_entropy(model(xb), yb)
                accelerator.backward(loss)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
                sched.step()
                opt.zero_grad()
        model.eval()
        correct = total = 0
        for xb, yb in evaluation:
            with torch.no_grad():
                pred = model(xb).argmax(-1)
            pred, yb = accelerator.gather_for_metrics((pred, yb))
            correct += int((pred == yb).sum())
            total += len(yb)
        accelerator.print("epoch", epoch, "accuracy", correct / total)


if __name__ == "__main__":
    main()
