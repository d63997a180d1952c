"""One epoch of an HF Trainer with a TrainerCallback that keeps each step's
per-parameter gradient norms (a tensor a step) and summarizes and clears
them at the epoch's end: kept for the epoch, however many steps it has."""
import os
import tempfile

import torch
from transformers import (DistilBertConfig, DistilBertForSequenceClassification, Trainer,
                          TrainerCallback, TrainingArguments)

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def examples(n, seq=32, vocab=500):
    g = torch.Generator().manual_seed(n)
    ids, labels = torch.randint(0, vocab, (n, seq), generator=g), torch.randint(0, 3, (n,), generator=g)
    return [{"input_ids": ids[i], "labels": labels[i]} for i in range(n)]


class GradNormsPerEpoch(TrainerCallback):
    def __init__(self):
        self.norms = []

    def on_pre_optimizer_step(self, args, state, control, model=None, **kwargs):
        self.norms.append(torch.stack([p.grad.detach().norm() for p in model.parameters()
                                       if p.grad is not None]))

    def on_epoch_end(self, args, state, control, **kwargs):
        norms = torch.stack(self.norms)
        print(f"epoch {state.epoch:.0f}: {len(self.norms)} steps, largest grad norm {float(norms.max()):.3f}")
        self.norms.clear()


def main():
    torch.manual_seed(0)
    cfg = DistilBertConfig(vocab_size=500, dim=64, n_layers=2, n_heads=2, hidden_dim=128, num_labels=3)
    model = DistilBertForSequenceClassification(cfg)
    with tempfile.TemporaryDirectory() as out:
        args = TrainingArguments(output_dir=out, per_device_train_batch_size=8, num_train_epochs=1,
                                 logging_steps=8, save_strategy="no", report_to=[],
                                 use_cpu=DEVICE.type != "cuda", dataloader_num_workers=0)
        trainer = Trainer(model=model, args=args, train_dataset=examples(192), callbacks=[GradNormsPerEpoch()])
        trainer.train()


if __name__ == "__main__":
    main()
