"""The optimizer knobs a tuned CPU run turns on: fused AdamW (the CPU
kernel), foreach gradient clipping and per-parameter norms with
torch._foreach_norm, zero_grad(set_to_none=False) keeping the .grad
buffers, ReduceLROnPlateau stepped on a validation loss every epoch, and
an early stop that restores the best weights."""
import copy
import os

import torch
import torch.nn as nn

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    w_true = torch.randn(32, 1, generator=g)
    xs = torch.randn(512, 32, generator=g)
    ys = xs @ w_true + 0.1 * torch.randn(512, 1, generator=g)
    xs, ys = xs.to(DEVICE), ys.to(DEVICE)
    model = nn.Sequential(nn.Linear(32, 128), nn.GELU(), nn.Linear(128, 1)).to(DEVICE)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01, fused=True)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=1)
    best, best_state, bad = float("inf"), None, 0
    for epoch in range(8):
        model.train()
        for i in range(0, 448, 64):
            loss = nn.functional.mse_loss(model(xs[i:i + 64]), ys[i:i + 64])
            opt.zero_grad(set_to_none=False)
            loss.backward()
            grads = [p.grad for p in model.parameters()]
            norms = torch._foreach_norm(grads)
            nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)
            opt.step()
        model.eval()
        with torch.no_grad():
            val = nn.functional.mse_loss(model(xs[448:]), ys[448:]).item()
        sched.step(val)
        if val < best:
            best, best_state, bad = val, copy.deepcopy(model.state_dict()), 0
        else:
            bad += 1
            if bad == 3:
                break
        print(epoch, round(val, 4), opt.param_groups[0]["lr"], round(max(n.item() for n in norms), 3))
    model.load_state_dict(best_state)
    print("best", round(best, 4))


if __name__ == "__main__":
    main()
