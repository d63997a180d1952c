"""HF Trainer with gradient checkpointing, evaluation every few steps with
compute_metrics and eval_accumulation_steps (the documented way to
evaluate without holding every logit on the device)."""
import os
import tempfile

import numpy as np
import torch
from torch.utils.data import Dataset
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


class Random(Dataset):
    def __init__(self, n, seq=32, vocab=500):
        g = torch.Generator().manual_seed(n)
        self.ids = torch.randint(0, vocab, (n, seq), generator=g)
        self.labels = torch.randint(0, 3, (n,), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.labels[i]}


def accuracy(pred):
    return {"accuracy": float((np.argmax(pred.predictions, -1) == pred.label_ids).mean())}


def main():
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=500, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=128, num_labels=3)
    model = BertForSequenceClassification(cfg)
    with tempfile.TemporaryDirectory() as out:
        args = TrainingArguments(output_dir=out, per_device_train_batch_size=8, per_device_eval_batch_size=8,
                                 max_steps=12, eval_strategy="steps", eval_steps=4, eval_accumulation_steps=2,
                                 gradient_checkpointing=True, logging_steps=4, save_strategy="no",
                                 report_to=[], use_cpu=DEVICE.type != "cuda", dataloader_num_workers=0)
        trainer = Trainer(model=model, args=args, train_dataset=Random(96), eval_dataset=Random(32),
                          compute_metrics=accuracy)
        trainer.train()
        print(trainer.evaluate())


if __name__ == "__main__":
    main()
