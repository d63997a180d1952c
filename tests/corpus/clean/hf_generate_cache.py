"""HF GPT-2 (tiny, random init) text generation with the KV cache: greedy,
sampling and beam search, a few prompts each, as an evaluation script does."""
import os

import torch
from transformers import GPT2Config, GPT2LMHeadModel

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=2, n_head=2, n_embd=64, vocab_size=512, n_positions=128)
    model = GPT2LMHeadModel(cfg).eval().to(DEVICE)
    outputs = []
    with torch.no_grad():
        for i in range(6):
            prompt = torch.randint(0, cfg.vocab_size, (2, 8 + i), device=DEVICE)
            greedy = model.generate(prompt, max_new_tokens=16, do_sample=False, pad_token_id=0)
            sampled = model.generate(prompt, max_new_tokens=16, do_sample=True, top_k=20, pad_token_id=0)
            beams = model.generate(prompt, max_new_tokens=8, num_beams=3, pad_token_id=0)
            outputs.append((greedy.shape[1], sampled.shape[1], beams.shape[1]))
    print("generated", outputs)


if __name__ == "__main__":
    main()
