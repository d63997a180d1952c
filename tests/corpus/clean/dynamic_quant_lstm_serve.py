"""Serving a dynamically quantized LSTM language model the way the PyTorch
dynamic quantization tutorial does: torch.ao.quantization.quantize_dynamic
on nn.LSTM and nn.Linear (int8 packed weights), batches of token ids run
under inference_mode, the hidden state carried across batches."""
import torch
import torch.nn as nn


class WordLM(nn.Module):
    def __init__(self, vocab=500, dim=64, hidden=128):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.LSTM(dim, hidden, num_layers=2, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, ids, state=None):
        y, state = self.rnn(self.embed(ids), state)
        return self.out(y), state


def main():
    torch.manual_seed(0)
    model = WordLM().eval()
    quantized = torch.ao.quantization.quantize_dynamic(model, {nn.LSTM, nn.Linear}, dtype=torch.qint8)
    state = None
    with torch.inference_mode():
        for step in range(10):
            ids = torch.randint(0, 500, (4, 20))
            logits, state = quantized(ids, state)
            print(step, logits.argmax(-1)[0, :5].tolist())


if __name__ == "__main__":
    main()
