"""An encoder-decoder in HF transformers: a tiny T5 (random init, no
download) trained on a copy-and-reverse task with padded labels (-100),
then beam search with generate() (encoder outputs and the
EncoderDecoderCache reused across steps), scores returned."""
import os

import torch
from transformers import T5Config, T5ForConditionalGeneration

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def batch(g, size=16, length=12):
    src = torch.randint(3, 100, (size, length), generator=g)
    labels = src.flip(1).clone()
    cut = torch.randint(6, length + 1, (size,), generator=g)
    for i, n in enumerate(cut.tolist()):
        labels[i, n:] = -100
    attention = torch.ones_like(src)
    return src.to(DEVICE), attention.to(DEVICE), labels.to(DEVICE)


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    config = T5Config(vocab_size=100, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_decoder_layers=2,
                      num_heads=4, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    model = T5ForConditionalGeneration(config).to(DEVICE)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.train()
    for step in range(10):
        src, attention, labels = batch(g)
        out = model(input_ids=src, attention_mask=attention, labels=labels)
        opt.zero_grad()
        out.loss.backward()
        opt.step()
    model.eval()
    src, attention, _ = batch(g, size=4)
    with torch.no_grad():
        gen = model.generate(input_ids=src, attention_mask=attention, num_beams=3, max_new_tokens=8,
                             return_dict_in_generate=True, output_scores=True, do_sample=False)
    print("loss", round(out.loss.item(), 3), "generated", tuple(gen.sequences.shape), len(gen.scores))


if __name__ == "__main__":
    main()
