"""A small MLP LightningModule trained with lightning's Trainer on CPU (on CUDA in the GPU half)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

from _lightning import ACCELERATOR, L  # the GPU half runs it on CUDA


class MLPClassifier(L.LightningModule):
    def __init__(self, in_dim=32, hidden=64, num_classes=4, lr=1e-2):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(
            nn.Linear(in_dim, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, num_classes),
        )

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


def main():
    L.seed_everything(0)
    x = torch.randn(256, 32)
    y = torch.randint(0, 4, (256,))
    loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)

    model = MLPClassifier()
    trainer = L.Trainer(
        accelerator=ACCELERATOR,
        devices=1,
        max_steps=10,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(model, train_dataloaders=loader)
    print("done, global_step =", trainer.global_step)


if __name__ == "__main__":
    main()
