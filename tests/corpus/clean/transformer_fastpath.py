"""nn.TransformerEncoder inference with a key padding mask: in eval mode
torch takes the fast path and runs on nested tensors."""
import os

import torch
import torch.nn as nn

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(64, nhead=4, dim_feedforward=128, batch_first=True)
    enc = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=True).eval().to(DEVICE)
    sums = []
    with torch.inference_mode():
        for i in range(10):
            x = torch.randn(4, 24, 64, device=DEVICE)
            mask = torch.zeros(4, 24, dtype=torch.bool, device=DEVICE)
            mask[:, 12 + i:] = True
            out = enc(x, src_key_padding_mask=mask)
            sums.append(float(out.sum()))
    print(len(sums))


if __name__ == "__main__":
    main()
