"""One epoch of a pytorch-ignite trainer with epoch-wise ROC AUC and average
precision attached to it (`ROC_AUC().attach(trainer, ...)`): an
EpochMetric keeps every batch's predictions and targets until the epoch
ends, as documented, and its engine resets it when the next epoch starts.
With one epoch there is no next epoch: the state grows at every step and is
still held at exit, bounded by the epoch's length. A validation evaluator
with its own ROC AUC runs after the epoch."""
import os

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from ignite.contrib.metrics import AveragePrecision, ROC_AUC
from ignite.engine import Events, create_supervised_evaluator, create_supervised_trainer
from ignite.metrics import Loss

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    x = torch.randn(4096, 32)
    y = (x[:, 0] + 0.5 * torch.randn(4096) > 0).float()
    train = DataLoader(TensorDataset(x[:3072], y[:3072]), batch_size=64, shuffle=True)
    val = DataLoader(TensorDataset(x[3072:], y[3072:]), batch_size=256)
    model = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 1), nn.Flatten(0)).to(DEVICE)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.BCEWithLogitsLoss()
    as_probabilities = lambda x, y, y_pred, loss: (torch.sigmoid(y_pred.detach()), y)  # noqa: E731
    trainer = create_supervised_trainer(model, optimizer, loss_fn, device=DEVICE,
                                        output_transform=as_probabilities)
    ROC_AUC().attach(trainer, "train_auc")
    AveragePrecision().attach(trainer, "train_ap")
    evaluator = create_supervised_evaluator(
        model, device=DEVICE,
        metrics={"loss": Loss(loss_fn),
                 "auc": ROC_AUC(output_transform=lambda out: (torch.sigmoid(out[0]), out[1]))})

    @trainer.on(Events.EPOCH_COMPLETED)
    def validate(engine):
        evaluator.run(val)
        print("epoch", engine.state.epoch, "train auc %.3f" % engine.state.metrics["train_auc"],
              "val auc %.3f" % evaluator.state.metrics["auc"])

    trainer.run(train, max_epochs=1)


if __name__ == "__main__":
    main()
