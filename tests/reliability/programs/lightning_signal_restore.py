"""A Lightning Trainer saves the SIGTERM handler it finds and restores it at
teardown, but only one Python set (it keeps None, a handler Python did not
set, and then leaves its own installed): the handler after fit() must be
the one before it, as without memlife."""
import signal

import lightning.pytorch as pl
import torch
from torch.utils.data import DataLoader, TensorDataset


class Regression(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(8, 1)

    def training_step(self, batch, _):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


before = signal.getsignal(signal.SIGTERM)
data = TensorDataset(torch.randn(32, 8), torch.randn(32, 1))
trainer = pl.Trainer(max_steps=4, accelerator="cpu", logger=False, enable_checkpointing=False,
                     enable_progress_bar=False, enable_model_summary=False)
trainer.fit(Regression(), DataLoader(data, batch_size=8))
after = signal.getsignal(signal.SIGTERM)
print(f"before {before!r} after {after!r}")
