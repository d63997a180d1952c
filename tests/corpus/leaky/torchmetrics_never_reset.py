# memlife-corpus: expect=step_growth
# source: https://github.com/Lightning-AI/torchmetrics/issues/1949
# source: https://github.com/NRCan/geo-deep-learning/issues/582
# source: https://github.com/Lightning-AI/torchmetrics/pull/2006
# Summary: torchmetrics' list-state metrics (AUROC, average precision,
# precision-recall curves) keep every batch they are updated with until
# reset(); code that calls compute() at each epoch's end and never reset()
# grows without bound (#1949: "GPU crash ... CUDA out of memory"; #582:
# "subtle and slow memory leak ... the fix is to use reset()"; #2006 made
# reset() the documented practice).
#
# Here a training loop tracks AUROC of each batch and logs it per epoch.
# Leaky: compute() only.  --fixed: compute() then reset(), as #582 does.
import os
import sys

import torch
import torch.nn as nn
from torchmetrics.classification import BinaryAUROC

from _truth import distinct_storage_bytes, write_truth

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half
EPOCHS = 3
STEPS = 10
BATCH = 512


def main():
    fixed = "--fixed" in sys.argv
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1)).to(DEVICE)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    auroc = BinaryAUROC().to(DEVICE)
    for epoch in range(EPOCHS):
        for step in range(STEPS):
            x = torch.randn(BATCH, 32, device=DEVICE)
            y = (x[:, 0] > 0).long()  # LEAK-ALLOC (kept as the metric's target)
            logits = model(x).squeeze(1)
            loss = nn.functional.binary_cross_entropy_with_logits(logits, y.float())
            opt.zero_grad()
            loss.backward()
            opt.step()
            probs = logits.detach().sigmoid()  # LEAK-ALLOC (kept as the metric's preds)
            auroc.update(probs, y)  # LEAK-HOLD (appends to auroc.preds and auroc.target)
        print("epoch", epoch, "auroc %.3f" % float(auroc.compute()))
        if fixed:
            auroc.reset()
    retained = distinct_storage_bytes(list(auroc.preds) + list(auroc.target))
    print("retained", retained)
    write_truth(retained, "none" if fixed else "step_growth")


if __name__ == "__main__":
    main()
