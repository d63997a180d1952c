"""A bidirectional GRU classifier over variable-length sequences, as
text and speech models batch them: padded batches packed with
pack_padded_sequence(enforce_sorted=False), unpacked with
pad_packed_sequence, a masked mean over the valid steps, gradient clipping;
then an evaluation pass under inference_mode."""
import os

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


class Classifier(nn.Module):
    def __init__(self, vocab=500, dim=64, hidden=96, classes=5):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.rnn = nn.GRU(dim, hidden, num_layers=2, batch_first=True, bidirectional=True, dropout=0.1)
        self.head = nn.Linear(2 * hidden, classes)

    def forward(self, tokens, lengths):
        packed = pack_padded_sequence(self.embed(tokens), lengths, batch_first=True, enforce_sorted=False)
        out, _ = self.rnn(packed)
        out, out_lengths = pad_packed_sequence(out, batch_first=True)
        out_lengths = out_lengths.to(out.device)  # pad_packed_sequence returns them on the CPU
        mask = (torch.arange(out.shape[1], device=out.device)[None, :] < out_lengths[:, None]).unsqueeze(-1)
        pooled = (out * mask).sum(1) / out_lengths[:, None]
        return self.head(pooled)


def batch(g, size=24):
    lengths = torch.randint(3, 40, (size,), generator=g)
    seqs = [torch.randint(1, 500, (int(n),), generator=g) for n in lengths]
    labels = torch.randint(0, 5, (size,), generator=g)
    return pad_sequence(seqs, batch_first=True).to(DEVICE), lengths, labels.to(DEVICE)  # lengths stay on the CPU


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    model = Classifier().to(DEVICE)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(15):
        tokens, lengths, labels = batch(g)
        loss = nn.functional.cross_entropy(model(tokens, lengths), labels)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    model.eval()
    correct = 0
    with torch.inference_mode():
        for _ in range(4):
            tokens, lengths, labels = batch(g)
            correct += (model(tokens, lengths).argmax(-1) == labels).sum().item()
    print("loss", round(loss.item(), 3), "eval correct", correct)


if __name__ == "__main__":
    main()
