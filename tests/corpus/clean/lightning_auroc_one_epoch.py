"""One epoch of a LightningModule that logs torchmetrics' AUROC per epoch
(`self.log(..., self.auroc, on_epoch=True)`): the metric keeps every
batch's predictions until Lightning computes and resets it at the epoch's
end, as documented. One epoch is the usual length of a fine-tuning run, so
the metric's state grows at every step of the run and is freed only at its
end, by the reset, not by the program letting go of a leak."""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torchmetrics.classification import BinaryAUROC, BinaryAveragePrecision

from _lightning import ACCELERATOR, L  # the GPU half runs it on CUDA


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 1))
        self.auroc = BinaryAUROC()
        self.average_precision = BinaryAveragePrecision()

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x).squeeze(1)
        loss = nn.functional.binary_cross_entropy_with_logits(logits, y.float())
        probs = logits.detach().sigmoid()
        self.auroc(probs, y)
        self.average_precision(probs, y)
        self.log("train_auroc", self.auroc, on_step=False, on_epoch=True)
        self.log("train_ap", self.average_precision, on_step=False, on_epoch=True)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def main():
    torch.manual_seed(0)
    x = torch.randn(4096, 32)
    y = (x[:, 0] + 0.5 * torch.randn(4096) > 0).long()
    loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True)
    trainer = L.Trainer(max_epochs=1, accelerator=ACCELERATOR, devices=1, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False)
    trainer.fit(Classifier(), loader)
    print("auroc", float(trainer.callback_metrics["train_auroc"]))


if __name__ == "__main__":
    main()
