# memlife-corpus: expect=step_growth
# source: https://github.com/Lightning-AI/pytorch-lightning/issues/5735
# source: https://github.com/Lightning-AI/pytorch-lightning/issues/8453
# Summary: "Bounded memory leak caused by trainer.evaluation_loop.outputs":
# the outputs of every validation step are cached and kept until the next
# validation run (#5735); returning outputs from validation_step stores them
# for the epoch end and can OOM (#8453). Here a plain training loop runs a
# validation batch every second optimizer step and appends the raw outputs to
# a list that is never cleared, so live memory grows only on every second
# step (flat in between).
#
# Leaky: val_outputs.append(out).  --fixed: keep the accuracy as a float.
import os
import sys

import torch
import torch.nn as nn

from _truth import write_truth

STEPS = 16
VAL_EVERY = 2
DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def validate(model, xv):
    with torch.no_grad():
        return model(xv)  # LEAK-ALLOC (512 x 256 fp32 logits = 512 KiB)


def main():
    fixed = "--fixed" in sys.argv
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256)).to(DEVICE)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    val_outputs = []
    accs = []
    for step in range(STEPS):
        x = torch.randn(32, 64, generator=g).to(DEVICE)
        y = torch.randint(0, 256, (32,), generator=g).to(DEVICE)
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        if step % VAL_EVERY == 1:
            xv = torch.randn(512, 64, generator=g).to(DEVICE)
            yv = torch.randint(0, 256, (512,), generator=g).to(DEVICE)
            out = validate(model, xv)
            if fixed:
                accs.append(out.argmax(1).eq(yv).float().mean().item())
            else:
                val_outputs.append(out)  # LEAK-HOLD (never cleared)
            del out
    # Counted inline, not with _truth.distinct_storage_bytes: the loop
    # variable t keeps the last output (appended after the last optimizer
    # step) alive until main() returns, and memlife's step_growth counts it
    # in what is held after the last step (4 MiB; without t, 3.5 MiB).
    seen = {}
    for t in val_outputs:
        seen[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
    retained = sum(seen.values())
    print("kept %d validation outputs, %d bytes" % (len(val_outputs), retained))
    write_truth(retained, "none" if fixed else "step_growth")


if __name__ == "__main__":
    main()
