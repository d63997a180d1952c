# memlife-corpus: torchrun
"""HF transformers Trainer under torchrun with 2 ranks on CPU: Trainer wraps
the tiny random-init BERT classifier in DDP itself (gloo), shards the data,
gathers eval predictions across ranks for compute_metrics."""
import os
import tempfile

import numpy as np
import torch
from torch.utils.data import Dataset
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments


class Pairs(Dataset):
    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(5, 200, (n, 24), generator=g)
        self.labels = (self.ids[:, 0] > 100).long()

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "attention_mask": torch.ones(24, dtype=torch.long),
                "labels": self.labels[i]}


def accuracy(pred):
    return {"accuracy": float((np.argmax(pred.predictions, -1) == pred.label_ids).mean())}


def main():
    torch.manual_seed(0)
    config = BertConfig(vocab_size=200, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=128, max_position_embeddings=32, num_labels=2)
    model = BertForSequenceClassification(config)
    with tempfile.TemporaryDirectory() as out:
        args = TrainingArguments(output_dir=out, per_device_train_batch_size=8, per_device_eval_batch_size=8,
                                 max_steps=8, eval_strategy="steps", eval_steps=4, logging_steps=2,
                                 save_strategy="no", report_to=[], use_cpu=True, ddp_backend="gloo",
                                 dataloader_num_workers=0, disable_tqdm=True)
        trainer = Trainer(model=model, args=args, train_dataset=Pairs(128, 1), eval_dataset=Pairs(32, 2),
                          compute_metrics=accuracy)
        trainer.train()
        metrics = trainer.evaluate()
    print(os.environ.get("RANK"), "eval accuracy", metrics["eval_accuracy"])


if __name__ == "__main__":
    main()
