# memlife-corpus: expect=residual_view
# source: https://github.com/pytorch/pytorch/issues/33101
# Summary: "Saving a small view of the tensor resulted in saving all": the
# reporter kept the activation of one image, big_tensor[0], out of a batch;
# the view keeps the whole batch's storage, so the kept size grows with the
# batch size. The fix given there is big_tensor[0].clone().
#
# Here a training loop keeps the first sample's features of the latest batch
# for logging. Leaky: feats[0].detach() (a view: 4 KiB used, 512 KiB held).
# --fixed: feats[0].detach().clone().
import os
import sys

import torch
import torch.nn as nn

from _truth import write_truth

STEPS = 10
BATCH = 128
DIM = 1024
DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(64, DIM)
        self.head = nn.Linear(DIM, 10)

    def forward(self, x):
        feats = torch.relu(self.enc(x))  # LEAK-ALLOC (128 x 1024 fp32 = 512 KiB)
        return self.head(feats), feats


def main():
    fixed = "--fixed" in sys.argv
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    model = Model().to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    snapshot = None
    for step in range(STEPS):
        x = torch.randn(BATCH, 64, generator=g).to(DEVICE)
        y = torch.randint(0, 10, (BATCH,), generator=g).to(DEVICE)
        opt.zero_grad(set_to_none=True)
        logits, feats = model(x)
        loss = nn.functional.cross_entropy(logits, y)
        loss.backward()
        opt.step()
        if fixed:
            snapshot = feats[0].detach().clone()
        else:
            snapshot = feats[0].detach()  # LEAK-HOLD (view keeps the whole batch storage)
        del logits, feats, loss
    st = snapshot.untyped_storage()
    used = snapshot.numel() * snapshot.element_size()
    # ground truth: the storage held only through the view, minus nothing
    # (the view reaches 4 KiB of it; the rest is the waste)
    retained = st.nbytes() if st.nbytes() > used else 0
    print("snapshot %s uses %d bytes, holds a %d-byte storage" % (tuple(snapshot.shape), used, st.nbytes()))
    write_truth(retained, "none" if fixed else "residual_view")


if __name__ == "__main__":
    main()
