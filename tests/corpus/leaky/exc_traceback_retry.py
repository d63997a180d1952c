# memlife-corpus: expect=step_growth
# source: https://github.com/pytorch/pytorch/issues/27600
# source: https://github.com/pytorch/pytorch/issues/10348
# Summary: an OOM-recovery loop catches the "out of memory" RuntimeError and
# keeps the exception object; its __traceback__ holds the frames of the failed
# forward, and with them the batch and every activation those frames had
# bound, so memory grows with each caught error (#10348: "references within
# the exception's traceback"; #27600: memory not freed after catching OOM).
# The fix from the reports: do not keep the exception (keep only its text).
#
# Leaky: errors.append(e).  --fixed: errors.append(str(e)).
# CPU only; the "OOM" is simulated by a row budget so it is deterministic.
import os
import sys

import torch
import torch.nn as nn

from _truth import distinct_storage_bytes, storage_ptrs, write_truth

STEPS = 12
BATCH = 64
ROW_BUDGET = 32  # pretend the device fits at most 32 rows per forward
DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(256, 1024)
        self.fc2 = nn.Linear(1024, 10)

    def forward(self, x):
        h = self.fc1(x)  # LEAK-ALLOC (256 KiB activation per failed 64-row batch)
        a = torch.relu(h)  # LEAK-ALLOC (256 KiB)
        if x.shape[0] > ROW_BUDGET:
            raise RuntimeError(
                "CUDA out of memory. Tried to allocate %d bytes (simulated)" % a.nbytes
            )
        return self.fc2(a)


def train_step(model, opt, x, y):
    opt.zero_grad(set_to_none=True)
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss.item()


def _traceback_tensors(errors):
    """The tensors bound in the frames the kept tracebacks hold (the catching
    frame itself is skipped: it is alive anyway)."""
    out = []
    for e in errors:
        if not isinstance(e, BaseException):
            continue
        tb = e.__traceback__.tb_next if e.__traceback__ is not None else None
        while tb is not None:
            out.extend(v for v in list(tb.tb_frame.f_locals.values()) if isinstance(v, torch.Tensor))
            tb = tb.tb_next
    return out


def main():
    fixed = "--fixed" in sys.argv
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    model = Net().to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    errors = []
    losses = []
    for step in range(STEPS):
        x = torch.randn(BATCH, 256, generator=g).to(DEVICE)  # LEAK-ALLOC (64 KiB batch)
        y = torch.randint(0, 10, (BATCH,), generator=g).to(DEVICE)  # LEAK-ALLOC (512 B labels)
        try:
            losses.append(train_step(model, opt, x, y))
        except RuntimeError as e:
            if fixed:
                errors.append(str(e))
            else:
                errors.append(e)  # LEAK-HOLD (traceback -> frames -> x, h, a)
            # retry with half-size chunks, as OOM handlers do
            for xc, yc in zip(x.split(ROW_BUDGET), y.split(ROW_BUDGET)):
                losses.append(train_step(model, opt, xc, yc))
    retained = distinct_storage_bytes(_traceback_tensors(errors), storage_ptrs(model.parameters()))
    print("caught %d errors, retained %d bytes" % (len(errors), retained))
    write_truth(retained, "none" if fixed else "step_growth")


if __name__ == "__main__":
    main()
