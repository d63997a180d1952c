# memlife-corpus: expect=step_growth
# source: https://github.com/huggingface/transformers/issues/12878
# source: https://github.com/huggingface/transformers/issues/8476
# Summary: "Trainer accumulates logits": the logits of every MLM step are
# kept (preds_host = nested_concat(preds_host, logits)), batch x seq x vocab
# each, until memory runs out (#12878); sgugger in #8476: store only what the
# metric needs (the argmax) in a custom loop, not the logits. Here a Trainer
# subclass keeps each training step's MLM logits for a token-accuracy metric
# computed "later", so live memory grows by one logits tensor (8 x 32 x 1000
# fp32 = 1000 KiB) per optimizer step.
#
# Leaky: self.kept_logits.append(outputs.logits.detach()).
# --fixed: keep the step's masked-token accuracy as a float (logits dropped).
import os
import sys

import torch
from transformers import BertConfig, BertForMaskedLM, Trainer, TrainingArguments

from _truth import distinct_storage_bytes, write_truth

STEPS = 10
BATCH = 8
SEQ = 32
VOCAB = 1000
DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


class RandomMLM(torch.utils.data.Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(1)
        self.ids = torch.randint(5, VOCAB, (n, SEQ), generator=g)
        self.mask = torch.rand(n, SEQ, generator=g) < 0.15

    def __len__(self):
        return self.ids.shape[0]

    def __getitem__(self, i):
        labels = torch.where(self.mask[i], self.ids[i], torch.full_like(self.ids[i], -100))
        inp = torch.where(self.mask[i], torch.full_like(self.ids[i], 4), self.ids[i])
        return {"input_ids": inp, "attention_mask": torch.ones(SEQ, dtype=torch.long), "labels": labels}


class LogitsKeepingTrainer(Trainer):
    def __init__(self, *args, fixed=False, **kwargs):
        super().__init__(*args, **kwargs)
        self.fixed = fixed
        self.kept_logits = []
        self.step_accs = []

    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        labels = inputs["labels"]
        outputs = model(**inputs)  # LEAK-ALLOC (the logits come from the MLM head)
        if self.fixed:
            sel = labels != -100
            acc = (outputs.logits.detach().argmax(-1)[sel] == labels[sel]).float().mean()
            self.step_accs.append(acc.item())
        else:
            self.kept_logits.append(outputs.logits.detach())  # LEAK-HOLD
        return (outputs.loss, outputs) if return_outputs else outputs.loss


def main():
    fixed = "--fixed" in sys.argv
    torch.manual_seed(0)
    config = BertConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64)
    model = BertForMaskedLM(config)
    args = TrainingArguments(
        output_dir="/tmp/memlife-corpus-hf-keeps-logits",
        max_steps=STEPS,
        per_device_train_batch_size=BATCH,
        learning_rate=1e-3,
        use_cpu=DEVICE.type != "cuda",
        report_to="none",
        save_strategy="no",
        logging_strategy="no",
        disable_tqdm=True,
        dataloader_num_workers=0,
        seed=0,
    )
    trainer = LogitsKeepingTrainer(model=model, args=args, train_dataset=RandomMLM(BATCH * STEPS), fixed=fixed)
    trainer.train()
    retained = distinct_storage_bytes(trainer.kept_logits)
    print("kept %d logits tensors, %d bytes" % (len(trainer.kept_logits), retained))
    write_truth(retained, "none" if fixed else "step_growth")


if __name__ == "__main__":
    main()
