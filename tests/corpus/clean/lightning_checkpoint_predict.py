"""Lightning Trainer with ModelCheckpoint, EarlyStopping and a torchmetrics
accuracy logged per epoch; then trainer.validate and trainer.predict (which
returns every batch's predictions, as asked)."""
import os
import tempfile

import lightning as L
import torch
import torch.nn as nn
from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint
from torch.utils.data import DataLoader, TensorDataset
from torchmetrics.classification import MulticlassAccuracy

# The GPU half runs it on CUDA (MEMLIFE_CORPUS_DEVICE=cuda).
ACCELERATOR = "gpu" if os.environ.get("MEMLIFE_CORPUS_DEVICE") == "cuda" else "cpu"


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
        self.val_acc = MulticlassAccuracy(num_classes=4)

    def training_step(self, batch, _):
        x, y = batch
        loss = nn.functional.cross_entropy(self.net(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, _):
        x, y = batch
        logits = self.net(x)
        self.val_acc(logits, y)
        self.log("val_loss", nn.functional.cross_entropy(logits, y), prog_bar=True)
        self.log("val_acc", self.val_acc, on_epoch=True)

    def predict_step(self, batch, _):
        return self.net(batch[0]).argmax(-1)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def main():
    torch.manual_seed(0)
    x, y = torch.randn(320, 16), torch.randint(0, 4, (320,))
    train = DataLoader(TensorDataset(x[:256], y[:256]), batch_size=32)
    val = DataLoader(TensorDataset(x[256:], y[256:]), batch_size=32)
    with tempfile.TemporaryDirectory() as out:
        trainer = L.Trainer(max_epochs=3, default_root_dir=out, accelerator=ACCELERATOR,
                            logger=False,
                            enable_progress_bar=False, enable_model_summary=False,
                            callbacks=[ModelCheckpoint(dirpath=out, monitor="val_loss", save_top_k=1),
                                       EarlyStopping(monitor="val_loss", patience=2)])
        model = Classifier()
        trainer.fit(model, train, val)
        trainer.validate(model, val, verbose=False)
        predictions = trainer.predict(model, val)
        print("predicted", sum(len(p) for p in predictions))


if __name__ == "__main__":
    main()
