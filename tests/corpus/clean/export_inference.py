"""torch.export: a model exported once (with a dynamic batch dimension),
then the ExportedProgram's module serves batches of several sizes; the
program is also saved to and loaded from an in-memory buffer."""
import io
import os

import torch
import torch.nn as nn

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1)).softmax(dim=-1)


def main():
    torch.manual_seed(0)
    model = Classifier().to(DEVICE).eval()
    batch = torch.export.Dim("batch", min=1, max=64)
    example = (torch.randn(4, 3, 16, 16, device=DEVICE),)
    program = torch.export.export(model, example, dynamic_shapes={"x": {0: batch}})
    buf = io.BytesIO()
    torch.export.save(program, buf)
    buf.seek(0)
    served = torch.export.load(buf).module()
    counts = torch.zeros(4, dtype=torch.long)
    for step, n in enumerate([4, 8, 2, 16, 8, 4, 32, 1]):
        with torch.inference_mode():
            probs = served(torch.randn(n, 3, 16, 16, device=DEVICE))
        counts += torch.bincount(probs.argmax(dim=-1).cpu(), minlength=4)
        print(step, n, counts.tolist())


if __name__ == "__main__":
    main()
