"""HF Trainer saving checkpoints every few steps (save_total_limit),
evaluating at the same cadence and loading the best model at the end."""
import tempfile

import torch
from torch.utils.data import Dataset
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments


class Tokens(Dataset):
    def __init__(self, n, seq=32, vocab=300):
        g = torch.Generator().manual_seed(n)
        self.ids = torch.randint(0, vocab, (n, seq), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


def main():
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=300, n_positions=64, n_embd=64, n_layer=2, n_head=2))
    with tempfile.TemporaryDirectory() as out:
        args = TrainingArguments(output_dir=out, per_device_train_batch_size=8, per_device_eval_batch_size=8,
                                 max_steps=12, eval_strategy="steps", eval_steps=4, save_strategy="steps",
                                 save_steps=4, save_total_limit=2, load_best_model_at_end=True,
                                 metric_for_best_model="eval_loss", logging_steps=4, report_to=[],
                                 use_cpu=True, dataloader_num_workers=0)
        trainer = Trainer(model=model, args=args, train_dataset=Tokens(96), eval_dataset=Tokens(24))
        trainer.train()
        print("best", trainer.state.best_metric)


if __name__ == "__main__":
    main()
