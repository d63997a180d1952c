"""Truncated backpropagation through time (pytorch/examples
word_language_model): an LSTM language model whose hidden state is carried
from batch to batch and cut from the previous graph with repackage_hidden;
evaluation every few steps under no_grad with its own hidden state."""
import os

import torch
import torch.nn as nn

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half
VOCAB, EMB, HID, BPTT, BATCH = 200, 32, 64, 12, 8


class RNNModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Embedding(VOCAB, EMB)
        self.rnn = nn.LSTM(EMB, HID, num_layers=2, dropout=0.1)
        self.decoder = nn.Linear(HID, VOCAB)

    def forward(self, x, hidden):
        out, hidden = self.rnn(self.encoder(x), hidden)
        return self.decoder(out), hidden

    def init_hidden(self, bsz):
        w = next(self.parameters())
        return (w.new_zeros(2, bsz, HID), w.new_zeros(2, bsz, HID))


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def main():
    torch.manual_seed(0)
    data = torch.randint(0, VOCAB, (BPTT * 16 + 1, BATCH), device=DEVICE)
    model = RNNModel().to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=1.0)
    criterion = nn.CrossEntropyLoss()
    hidden = model.init_hidden(BATCH)
    for step, i in enumerate(range(0, data.size(0) - 1 - BPTT, BPTT)):
        x, y = data[i:i + BPTT], data[i + 1:i + 1 + BPTT]
        hidden = repackage_hidden(hidden)
        model.zero_grad()
        out, hidden = model(x, hidden)
        loss = criterion(out.view(-1, VOCAB), y.reshape(-1))
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        opt.step()
        if step % 5 == 4:
            model.eval()
            with torch.no_grad():
                eval_hidden = model.init_hidden(BATCH)
                eval_out, eval_hidden = model(data[:BPTT], eval_hidden)
                print("eval", round(criterion(eval_out.view(-1, VOCAB), data[1:BPTT + 1].reshape(-1)).item(), 3))
            model.train()
        print(step, round(loss.item(), 3))


if __name__ == "__main__":
    main()
