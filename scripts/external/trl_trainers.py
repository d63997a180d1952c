# TRL's trainers (pip install trl; 1.16.0 here, transformers 5.24.0) on a
# tiny GPT-2 (random init) with a word-level tokenizer built here, on
# generated text, CPU:
#   python3 trl_trainers.py sft    SFTTrainer, evaluation every 8 steps, checkpoints
#   python3 trl_trainers.py sft_lora  the same with a LoRA adapter (peft_config; pip install peft),
#                                  then the adapter merged into the model (merge_and_unload)
#   python3 trl_trainers.py dpo    DPOTrainer (its reference model loaded from the saved model)
#   python3 trl_trainers.py grpo   GRPOTrainer, 4 generations per prompt, a length reward
import os
import random
import sys

from datasets import Dataset
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

WORDS = [f"w{i}" for i in range(200)]
what = sys.argv[1]


def tokenizer():
    vocab = {"<pad>": 0, "<eos>": 1, "<unk>": 2, **{w: i + 3 for i, w in enumerate(WORDS)}}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")


def saved_model(tok, path="trl_tiny_gpt2"):
    """DPO and GRPO load their reference model by the model's name: a saved one."""
    if not os.path.exists(path):
        cfg = GPT2Config(vocab_size=len(tok), n_positions=128, n_embd=64, n_layer=2, n_head=2,
                         bos_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id,
                         pad_token_id=tok.pad_token_id)
        GPT2LMHeadModel(cfg).save_pretrained(path)
        tok.save_pretrained(path)
    return path


def sentence(r, n):
    return " ".join(r.choice(WORDS) for _ in range(n))


def rows(seed, n, make):
    r = random.Random(seed)
    return Dataset.from_list([make(r) for _ in range(n)])


tok = tokenizer()
common = dict(per_device_train_batch_size=8, report_to=[], use_cpu=True)
if what in ("sft", "sft_lora"):
    from trl import SFTConfig, SFTTrainer
    lora = None
    if what == "sft_lora":
        from peft import LoraConfig
        lora = LoraConfig(r=8, lora_alpha=16, lora_dropout=0.05, target_modules=["c_attn"], task_type="CAUSAL_LM")
    text = lambda r: {"text": sentence(r, r.randint(8, 40))}
    args = SFTConfig(output_dir=f"out_{what}", max_steps=24, logging_steps=4, save_steps=12, max_length=64,
                     packing=False, eval_strategy="steps", eval_steps=8, per_device_eval_batch_size=8, **common)
    trainer = SFTTrainer(model=saved_model(tok), args=args, train_dataset=rows(0, 128, text),
                         eval_dataset=rows(3, 32, text), processing_class=tok, peft_config=lora)
    trainer.train()
    if lora is not None:
        trainer.model.merge_and_unload()
elif what == "dpo":
    from trl import DPOConfig, DPOTrainer
    pair = lambda r: {"prompt": sentence(r, r.randint(3, 10)), "chosen": " " + sentence(r, r.randint(2, 12)),
                      "rejected": " " + sentence(r, r.randint(2, 12))}
    args = DPOConfig(output_dir="out_dpo", max_steps=24, logging_steps=4, save_steps=12, max_length=64,
                     eval_strategy="steps", eval_steps=8, per_device_eval_batch_size=8, **common)
    DPOTrainer(model=saved_model(tok), args=args, train_dataset=rows(1, 128, pair),
               eval_dataset=rows(4, 32, pair), processing_class=tok).train()
elif what == "grpo":
    from trl import GRPOConfig, GRPOTrainer
    prompt = lambda r: {"prompt": sentence(r, r.randint(3, 10))}
    reward_len = lambda completions, **kw: [-abs(12 - len(c.split())) for c in completions]
    args = GRPOConfig(output_dir="out_grpo", max_steps=12, num_generations=4, max_completion_length=16,
                      logging_steps=2, save_steps=6, beta=0.04, **common)
    GRPOTrainer(model=saved_model(tok), reward_funcs=reward_len, args=args, train_dataset=rows(2, 64, prompt),
                processing_class=tok).train()
else:
    sys.exit(f"trl_trainers.py: unknown program {what!r}")
print("done")
