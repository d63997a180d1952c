"""nn.TransformerEncoder inference with a key padding mask: in eval mode
torch takes the fast path and runs on nested tensors."""
import torch
import torch.nn as nn


def main():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(64, nhead=4, dim_feedforward=128, batch_first=True)
    enc = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=True).eval()
    sums = []
    with torch.inference_mode():
        for i in range(10):
            x = torch.randn(4, 24, 64)
            mask = torch.zeros(4, 24, dtype=torch.bool)
            mask[:, 12 + i:] = True
            out = enc(x, src_key_padding_mask=mask)
            sums.append(float(out.sum()))
    print(len(sums))


if __name__ == "__main__":
    main()
