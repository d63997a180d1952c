"""Lightning's own DDP launcher: Trainer(strategy="ddp", devices=2) on CPU
starts the second rank itself (it runs this script again as a subprocess,
no torchrun), gloo under the hood; validation with sync_dist logging and a
DistributedSampler the Trainer adds."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

import lightning as L


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
        self.log("train_loss", loss, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", F.mse_loss(self.net(x), y), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05, momentum=0.9)


def main():
    L.seed_everything(0)
    x = torch.randn(512, 16)
    y = x[:, :1] * 2 - x[:, 1:2]
    train = DataLoader(TensorDataset(x[:384], y[:384]), batch_size=32)
    val = DataLoader(TensorDataset(x[384:], y[384:]), batch_size=32)
    trainer = L.Trainer(accelerator="cpu", devices=2, strategy="ddp", max_epochs=2,
                        logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False)
    trainer.fit(Regressor(), train_dataloaders=train, val_dataloaders=val)
    print("rank", trainer.global_rank, "steps", trainer.global_step)
    # Lightning leaves the process group up after fit; a script that goes
    # on (or a test process running several programs) takes it down.
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
