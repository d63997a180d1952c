"""A Lightning run with the knobs a real config sets: bf16-mixed precision,
gradient accumulation over 2 batches, gradient clipping, validation every
10 training batches, ModelCheckpoint keeping the best 2 by val_loss,
LearningRateMonitor with a cosine schedule, a LightningDataModule; then
the best checkpoint reloaded and tested."""
import os
import tempfile

import lightning as L
import torch
import torch.nn as nn
from lightning.pytorch.callbacks import LearningRateMonitor, ModelCheckpoint
from lightning.pytorch.loggers import CSVLogger
from torch.utils.data import DataLoader, TensorDataset

# The GPU half runs it on CUDA (MEMLIFE_CORPUS_DEVICE=cuda).
ACCELERATOR = "gpu" if os.environ.get("MEMLIFE_CORPUS_DEVICE") == "cuda" else "cpu"


class Data(L.LightningDataModule):
    def setup(self, stage=None):
        g = torch.Generator().manual_seed(0)
        x = torch.randn(640, 24, generator=g)
        y = (x[:, :3].sum(1) > 0).long()
        self.train, self.val = TensorDataset(x[:512], y[:512]), TensorDataset(x[512:], y[512:])

    def train_dataloader(self):
        return DataLoader(self.train, batch_size=16, shuffle=True)

    def val_dataloader(self):
        return DataLoader(self.val, batch_size=64)

    def test_dataloader(self):
        return DataLoader(self.val, batch_size=64)


class Model(L.LightningModule):
    def __init__(self, lr=3e-3):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(nn.Linear(24, 96), nn.GELU(), nn.Dropout(0.1), nn.Linear(96, 2))

    def step(self, batch, name):
        x, y = batch
        logits = self.net(x)
        loss = nn.functional.cross_entropy(logits, y)
        self.log(f"{name}_loss", loss, prog_bar=name == "val")
        self.log(f"{name}_acc", (logits.argmax(-1) == y).float().mean())
        return loss

    def training_step(self, batch, idx):
        return self.step(batch, "train")

    def validation_step(self, batch, idx):
        self.step(batch, "val")

    def test_step(self, batch, idx):
        self.step(batch, "test")

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=40)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


def main():
    L.seed_everything(0, verbose=False)
    with tempfile.TemporaryDirectory() as root:
        ckpt = ModelCheckpoint(dirpath=root, monitor="val_loss", save_top_k=2)
        trainer = L.Trainer(max_epochs=2, accelerator=ACCELERATOR, devices=1,
                            precision="bf16-mixed",
                            accumulate_grad_batches=2, gradient_clip_val=1.0, val_check_interval=10,
                            callbacks=[ckpt, LearningRateMonitor(logging_interval="step")],
                            logger=CSVLogger(root), enable_progress_bar=False, enable_model_summary=False)
        data = Data()
        trainer.fit(Model(), datamodule=data)
        best = Model.load_from_checkpoint(ckpt.best_model_path)
        result = trainer.test(best, datamodule=data, verbose=False)
    print("best val_loss", round(float(ckpt.best_model_score), 4), "test", round(result[0]["test_acc"], 3))


if __name__ == "__main__":
    main()
