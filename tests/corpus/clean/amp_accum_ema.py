"""bf16 autocast on CPU, gradient accumulation, clip_grad_norm_, a OneCycle
scheduler, an EMA of the weights (swa_utils.AveragedModel) and an in-memory
checkpoint every few steps."""
import io
import os

import torch
import torch.nn as nn
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(256, 10)).to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    steps, accum = 10, 4
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=steps)
    ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.99))
    best = None
    for step in range(steps):
        for micro in range(accum):
            x = torch.randn(8, 3, 16, 16, device=DEVICE)
            y = torch.randint(0, 10, (8,), device=DEVICE)
            with torch.autocast(DEVICE.type, dtype=torch.bfloat16):
                loss = nn.functional.cross_entropy(model(x), y) / accum
            loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad()
        sched.step()
        ema.update_parameters(model)
        if step % 3 == 0:
            buf = io.BytesIO()
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "ema": ema.state_dict()}, buf)
            best = buf.getvalue()
    print("checkpoint bytes", len(best))


if __name__ == "__main__":
    main()
