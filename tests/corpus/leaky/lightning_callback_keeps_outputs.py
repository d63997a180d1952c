# memlife-corpus: expect=step_growth
# source: https://github.com/Lightning-AI/pytorch-lightning/issues/15514
# source: https://github.com/Lightning-AI/pytorch-lightning/issues/8583
# Summary: returning extra tensors from training_step ({"loss": loss, "x": x})
# and keeping the step outputs for the epoch end grows memory until OOM
# (#15514: "unless you're doing something with x down the line ... there is
# probably no need for it to be accumulating"; log loss.item()); in #8583 a
# metrics Callback overriding on_*_batch_end kept every step's outputs
# ("This causes that outputs are stored --> memory leak").
#
# Here a Lightning Callback collects every training step's outputs dict,
# including the step's 64 x 1024 feature tensor, in on_train_batch_end.
# --fixed: training_step returns only the loss and the callback keeps
# loss.item().
import os
import sys

import lightning as L
import torch
import torch.nn as nn

from _truth import distinct_storage_bytes, storage_ptrs, write_truth

STEPS = 12
BATCH = 64
DIM = 1024
# The GPU half runs it on CUDA (MEMLIFE_CORPUS_DEVICE=cuda).
ACCELERATOR = "gpu" if os.environ.get("MEMLIFE_CORPUS_DEVICE") == "cuda" else "cpu"


class FeatModel(L.LightningModule):
    def __init__(self, fixed):
        super().__init__()
        self.fixed = fixed
        self.enc = nn.Linear(32, DIM)
        self.head = nn.Linear(DIM, 4)

    def training_step(self, batch, batch_idx):
        x, y = batch
        feats = torch.relu(self.enc(x))  # LEAK-ALLOC (64 x 1024 fp32 = 256 KiB)
        loss = nn.functional.cross_entropy(self.head(feats), y)
        if self.fixed:
            return loss
        return {"loss": loss, "feats": feats}

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


class OutputsCollector(L.Callback):
    def __init__(self, fixed):
        self.fixed = fixed
        self.outputs = []

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if self.fixed:
            self.outputs.append(outputs["loss"].item())
        else:
            self.outputs.append(outputs)  # LEAK-HOLD (every step's outputs dict)


def main():
    fixed = "--fixed" in sys.argv
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(1)
    data = torch.utils.data.TensorDataset(torch.randn(BATCH * STEPS, 32, generator=g),
                                          torch.randint(0, 4, (BATCH * STEPS,), generator=g))
    loader = torch.utils.data.DataLoader(data, batch_size=BATCH, shuffle=False)
    model = FeatModel(fixed)
    collector = OutputsCollector(fixed)
    trainer = L.Trainer(max_steps=STEPS, accelerator=ACCELERATOR, devices=1, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, callbacks=[collector])
    trainer.fit(model, loader)
    kept = [v for out in collector.outputs if isinstance(out, dict)
            for v in out.values() if isinstance(v, torch.Tensor)]
    retained = distinct_storage_bytes(kept, storage_ptrs(model.parameters()))
    print("callback kept %d step outputs, %d bytes" % (len(collector.outputs), retained))
    write_truth(retained, "none" if fixed else "step_growth")


if __name__ == "__main__":
    main()
