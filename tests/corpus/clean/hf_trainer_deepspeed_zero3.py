# memlife-corpus: torchrun
"""HF transformers Trainer with DeepSpeed ZeRO-3 (TrainingArguments'
deepspeed config, "auto" values filled by the Trainer) on 2 ranks, DeepSpeed's
CPU accelerator over gloo: a tiny random-init GPT-2 causal LM built by the
Trainer's ZeRO-3 path (the DeepSpeed engine partitions it), trained with
gradient accumulation and clipping, evaluated through the engine."""
import os
import tempfile

import torch
from torch.utils.data import Dataset

os.environ.setdefault("DS_ACCELERATOR", "cpu")
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments  # noqa: E402

DS_CONFIG = {
    "train_micro_batch_size_per_gpu": "auto",
    "gradient_accumulation_steps": "auto",
    "gradient_clipping": "auto",
    "zero_optimization": {"stage": 3, "stage3_param_persistence_threshold": 0},
    "optimizer": {"type": "AdamW", "params": {"lr": "auto", "weight_decay": "auto", "torch_adam": True}},
}


class Tokens(Dataset):
    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(0, 128, (n, 32), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


def main():
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as out:
        args = TrainingArguments(output_dir=out, per_device_train_batch_size=4, per_device_eval_batch_size=4,
                                 gradient_accumulation_steps=2, max_steps=6, eval_strategy="steps",
                                 eval_steps=3, logging_steps=2, save_strategy="no", report_to=[],
                                 use_cpu=True, ddp_backend="gloo", deepspeed=DS_CONFIG, disable_tqdm=True,
                                 learning_rate=1e-3)
        config = GPT2Config(vocab_size=128, n_positions=64, n_embd=64, n_layer=2, n_head=4)
        model = GPT2LMHeadModel(config)
        trainer = Trainer(model=model, args=args, train_dataset=Tokens(96, 1), eval_dataset=Tokens(16, 2))
        trainer.train()
        metrics = trainer.evaluate()
    print(os.environ.get("RANK"), "eval loss", round(metrics["eval_loss"], 3))


if __name__ == "__main__":
    main()
