"""Parameter-efficient fine-tuning: a tiny random-init HF GPT-2 wrapped by
peft's LoRA (only the adapters train), gradient checkpointing on, then the
adapters merged into the base weights for generation."""
import os

import torch
from peft import LoraConfig, get_peft_model
from transformers import GPT2Config, GPT2LMHeadModel

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=256, n_positions=64, n_embd=64, n_layer=2, n_head=4)
    base = GPT2LMHeadModel(config)
    base.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model = get_peft_model(base, LoraConfig(r=4, lora_alpha=8, target_modules=["c_attn", "c_proj"],
                                            lora_dropout=0.05, fan_in_fan_out=True, task_type="CAUSAL_LM"))
    model.to(DEVICE).train()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    for step in range(10):
        ids = torch.randint(0, 256, (4, 32), device=DEVICE)
        loss = model(input_ids=ids, labels=ids).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(step, round(loss.item(), 4))
    merged = model.merge_and_unload().eval()
    with torch.no_grad():
        out = merged.generate(torch.randint(0, 256, (1, 8), device=DEVICE), max_new_tokens=8, do_sample=False,
                              pad_token_id=0)
    print("generated", out.shape[1])


if __name__ == "__main__":
    main()
