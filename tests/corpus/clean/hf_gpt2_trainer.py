"""Train a tiny GPT-2 language model for a few steps with transformers.Trainer.

Random initialisation, synthetic token data, CPU only, nothing downloaded.
"""
import os
import tempfile

import torch
from torch.utils.data import Dataset
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments, set_seed


class RandomTokens(Dataset):
    def __init__(self, n, seq_len, vocab_size, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.data = torch.randint(0, vocab_size, (n, seq_len), generator=g)

    def __len__(self):
        return self.data.size(0)

    def __getitem__(self, i):
        ids = self.data[i]
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": ids.clone()}


def main():
    set_seed(0)
    config = GPT2Config(
        vocab_size=1000, n_positions=64, n_embd=64, n_layer=2, n_head=4, bos_token_id=999, eos_token_id=999
    )
    model = GPT2LMHeadModel(config)
    train_ds = RandomTokens(64, 32, config.vocab_size)

    with tempfile.TemporaryDirectory() as out_dir:
        args = TrainingArguments(
            output_dir=out_dir,
            per_device_train_batch_size=4,
            learning_rate=5e-4,
            max_steps=8,
            logging_steps=4,
            save_strategy="no",
            report_to="none",
            # The GPU corpus run (scripts/device/gpu_corpus.sh) sets cuda.
            use_cpu=os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu") == "cpu",
            dataloader_num_workers=0,
            disable_tqdm=True,
            seed=0,
        )
        trainer = Trainer(model=model, args=args, train_dataset=train_ds)
        result = trainer.train()
    print(f"train_loss={result.training_loss:.4f} steps={result.global_step}")


if __name__ == "__main__":
    main()
