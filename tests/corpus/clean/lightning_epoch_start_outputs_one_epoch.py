"""One epoch of a LightningModule that starts each training epoch with
fresh lists in `on_train_epoch_start` and keeps each step's detached
predictions and targets in them, to score the epoch in
`on_train_epoch_end`, without clearing: the next epoch's start replaces
them. Run for one epoch, as a smoke test does, the lists grow at every
step and are still alive at the end; they hold one epoch's worth."""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

from _lightning import ACCELERATOR, L  # the GPU half runs it on CUDA


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 4))

    def on_train_epoch_start(self):
        self.epoch_preds = []
        self.epoch_targets = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        self.epoch_preds.append(logits.detach())
        self.epoch_targets.append(y)
        return nn.functional.cross_entropy(logits, y)

    def on_train_epoch_end(self):
        accuracy = (torch.cat(self.epoch_preds).argmax(1) == torch.cat(self.epoch_targets)).float().mean()
        self.log("train_epoch_accuracy", accuracy)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def main():
    torch.manual_seed(0)
    x = torch.randn(4096, 32)
    y = (x[:, 0] > 0).long() + 2 * (x[:, 1] > 0).long()
    loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True)
    trainer = L.Trainer(max_epochs=1, accelerator=ACCELERATOR, devices=1, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False)
    trainer.fit(Classifier(), loader)
    print("epoch accuracy", float(trainer.callback_metrics["train_epoch_accuracy"]))


if __name__ == "__main__":
    main()
