"""Checkpoint and resume inside one run, as a preemptible job does: model,
optimizer, LR scheduler, GradScaler-free AMP and RNG states saved to a
buffer at step 5, training goes on, then everything is restored from the
buffer (optimizer.load_state_dict replaces its state tensors) and the run
replays from step 5."""
import io
import os

import torch
import torch.nn as nn

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(48, 96), nn.LayerNorm(96), nn.ReLU(), nn.Linear(96, 8)).to(DEVICE)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=20)
    saved = None
    step, resumed = 0, False
    while step < 12:
        if step == 5 and saved is None:
            buf = io.BytesIO()
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(),
                        "rng": torch.get_rng_state(), "step": step}, buf)
            saved = buf.getvalue()
        if step == 9 and not resumed:
            state = torch.load(io.BytesIO(saved), map_location=DEVICE, weights_only=False)
            model.load_state_dict(state["model"])
            opt.load_state_dict(state["opt"])
            sched.load_state_dict(state["sched"])
            torch.set_rng_state(state["rng"].cpu())  # map_location moved it
            step, resumed = state["step"], True
            del state
        x, y = torch.randn(16, 48, device=DEVICE), torch.randint(0, 8, (16,), device=DEVICE)
        with torch.autocast(DEVICE.type, dtype=torch.bfloat16):
            loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        print(step, round(loss.item(), 4))
        step += 1


if __name__ == "__main__":
    main()
