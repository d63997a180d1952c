"""Batches decoded from raw bytes the way custom data pipelines read
records: torch.frombuffer over bytes read from a file (the tensor borrows
Python's buffer), a bytearray reused as a staging area, numpy views of the
same memory, and torch.tensor copies for training."""
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
from _device import DEVICE  # cuda on the GPU half

RECORD = 16 * 4 + 8  # 16 float32 features and an int64 label


def main():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "records.bin")
        with open(path, "wb") as f:
            for _ in range(512):
                f.write(rng.standard_normal(16, dtype=np.float32).tobytes())
                f.write(np.int64(rng.integers(0, 3)).tobytes())
        model = nn.Linear(16, 3).to(DEVICE)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        staging = bytearray(RECORD * 32)
        with open(path, "rb") as f:
            for step in range(16):
                raw = f.read(RECORD * 32)
                staging[:len(raw)] = raw
                records = torch.frombuffer(staging, dtype=torch.uint8).view(32, RECORD)
                x = records[:, :64].contiguous().view(torch.float32)
                y = records[:, 64:].contiguous().view(torch.int64).squeeze(1)
                loss = nn.functional.cross_entropy(model(x.to(DEVICE)), y.to(DEVICE))
                opt.zero_grad()
                loss.backward()
                opt.step()
                peek = np.frombuffer(raw, dtype=np.uint8)[:4]
                if step % 4 == 0:
                    print(step, round(loss.item(), 4), peek.tolist())
                del records


if __name__ == "__main__":
    main()
