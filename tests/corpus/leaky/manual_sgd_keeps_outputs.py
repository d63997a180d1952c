# memlife-corpus: expect=step_growth
# source: https://github.com/TRI-ML/packnet-sfm/issues/47
# source: https://github.com/TRI-ML/packnet-sfm/pull/51
# Summary: "memory usage is growing slowly (from 21G to 38G in one epoch)":
# the trainer appended every batch's output dict, loss tensor included, to
# a list kept for the whole epoch; the maintainer agreed ("we should detach
# output['loss'] before appending it") and fixed it in #51.
#
# Here the loop has no optimizer: the parameters are updated by hand
# (`p -= lr * p.grad` under no_grad, as PyTorch's "What is torch.nn
# really?" tutorial starts), so no optimizer step marks the steps; the end
# of each backward pass does. Every batch's outputs (the reconstruction and
# the loss) are kept for an end-of-run summary.
# --fixed: the list keeps loss.item() and the error as numbers.
# --data: update through `.data` (`p.data.add_(p.grad, alpha=-lr)`, as
# pytorch/examples word_language_model does), which bumps no version counter
# of the parameter; the GPU half runs it so on CUDA, where memlife cannot
# read a parameter's bytes to see the update.
import os
import sys

import torch
import torch.nn as nn

from _truth import distinct_storage_bytes, storage_ptrs, write_truth

STEPS = 12
BATCH = 256
DIM = 784
LR = 0.05
DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def main():
    fixed = "--fixed" in sys.argv
    through_data = "--data" in sys.argv
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    model = nn.Sequential(nn.Linear(DIM, 128), nn.ReLU(), nn.Linear(128, DIM), nn.Sigmoid()).to(DEVICE)
    outputs = []
    for step in range(STEPS):
        xb = torch.rand(BATCH, DIM, generator=g).to(DEVICE)
        pred = model(xb)  # LEAK-ALLOC (the reconstruction, 256 x 784)
        loss = nn.functional.mse_loss(pred, xb)
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                if through_data:
                    p.data.add_(p.grad, alpha=-LR)
                else:
                    p -= LR * p.grad
            model.zero_grad()
        if fixed:
            outputs.append({"loss": loss.item(), "mae": (pred - xb).abs().mean().item()})
        else:
            outputs.append({"loss": loss, "pred": pred})  # LEAK-HOLD
    kept = [v for out in outputs for v in out.values() if isinstance(v, torch.Tensor)]
    retained = distinct_storage_bytes(kept, storage_ptrs(model.parameters()))
    mean = sum(float(out["loss"]) for out in outputs) / len(outputs)
    print("mean loss %.4f; the outputs list holds %d bytes" % (mean, retained))
    write_truth(retained, "none" if fixed else "step_growth")


if __name__ == "__main__":
    main()
