"""HF Llama (tiny config, random init) generating with a static KV cache
(cache_implementation="static": preallocated per-layer buffers filled in
place), batch after batch, as a serving loop does."""
import os

import torch
from transformers import LlamaConfig, LlamaForCausalLM

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    cfg = LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, vocab_size=256,
                      max_position_embeddings=128)
    model = LlamaForCausalLM(cfg).eval().to(DEVICE)
    lengths = []
    with torch.no_grad():
        for i in range(6):
            prompt = torch.randint(1, cfg.vocab_size, (2, 6 + i), device=DEVICE)
            out = model.generate(prompt, max_new_tokens=12, do_sample=False,
                                 cache_implementation="static", pad_token_id=0)
            lengths.append(out.shape[1])
    print("generated", lengths)


if __name__ == "__main__":
    main()
