"""One epoch of a LightningModule that keeps each training step's loss in
`self.training_step_outputs` and averages and clears them in
`on_train_epoch_end`: the pattern Lightning 2's documentation gives for
what `training_epoch_end(outputs)` did. The list, and the graph each loss
keeps, grow at every step of the epoch and are freed at its end."""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

from _lightning import ACCELERATOR, L  # the GPU half runs it on CUDA


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 1))
        self.training_step_outputs = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x).squeeze(1), y)
        self.training_step_outputs.append(loss)
        return loss

    def on_train_epoch_end(self):
        epoch_mean = torch.stack(self.training_step_outputs).mean()
        self.log("training_epoch_mean", epoch_mean)
        self.training_step_outputs.clear()  # free memory

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def main():
    torch.manual_seed(0)
    x = torch.randn(4096, 32)
    y = x[:, 0] - 0.5 * x[:, 1]
    loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True)
    trainer = L.Trainer(max_epochs=1, accelerator=ACCELERATOR, devices=1, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False)
    trainer.fit(Regressor(), loader)
    print("epoch mean", float(trainer.callback_metrics["training_epoch_mean"]))


if __name__ == "__main__":
    main()
