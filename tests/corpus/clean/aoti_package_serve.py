"""Ahead-of-time compilation for serving: torch.export of a small model
with a dynamic batch dimension, AOTInductor compiles it into a package
(.pt2 with a shared library), the package is loaded back and serves
batches of varying size, checked against eager."""
import os
import tempfile

import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(32, 128), nn.GELU(), nn.LayerNorm(128), nn.Linear(128, 128), nn.GELU())
        self.out = nn.Linear(128, 3)

    def forward(self, x):
        return torch.softmax(self.out(self.body(x)), dim=-1)


def main():
    torch.manual_seed(0)
    model = Scorer().eval()
    batch = torch.export.Dim("batch", min=1, max=256)
    with torch.no_grad():
        exported = torch.export.export(model, (torch.randn(8, 32),), dynamic_shapes={"x": {0: batch}})
    with tempfile.TemporaryDirectory() as tmp:
        path = torch._inductor.aoti_compile_and_package(exported, package_path=os.path.join(tmp, "scorer.pt2"))
        runner = torch._inductor.aoti_load_package(path)
        worst = 0.0
        for size in (1, 7, 64, 200, 7):
            x = torch.randn(size, 32)
            with torch.no_grad():
                worst = max(worst, (runner(x) - model(x)).abs().max().item())
        del runner
    print("max difference", worst)


if __name__ == "__main__":
    main()
