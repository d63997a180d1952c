"""Fine-tuning from a checkpoint loaded with torch.load(mmap=True,
weights_only=True) into a model built on the meta device
(load_state_dict(assign=True)), on data that arrives as numpy arrays
(torch.from_numpy, shared with numpy) and a memory-mapped numpy file."""
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
from _device import DEVICE  # cuda on the GPU half


def make_model():
    return nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))


def main():
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = os.path.join(tmp, "model.pt")
        torch.save(make_model().state_dict(), ckpt)
        data_path = os.path.join(tmp, "data.npy")
        np.save(data_path, np.random.default_rng(0).standard_normal((512, 32), dtype=np.float32))

        state = torch.load(ckpt, mmap=True, weights_only=True)
        with torch.device("meta"):
            model = make_model()
        model.load_state_dict(state, assign=True)
        del state
        # mmap'd parameters are read-only file pages: train on copies.
        model = model.to(DEVICE, torch.float32).requires_grad_(True)
        for p in model.parameters():
            p.data = p.data.clone()
        opt = torch.optim.SGD(model.parameters(), lr=0.01)

        features = np.load(data_path, mmap_mode="r")
        labels = np.random.default_rng(1).integers(0, 4, size=512)
        for step in range(16):
            rows = slice(step * 32, (step + 1) * 32)
            x = torch.from_numpy(np.ascontiguousarray(features[rows]))
            y = torch.from_numpy(labels[rows])
            loss = nn.functional.cross_entropy(model(x.to(DEVICE)), y.to(DEVICE))
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % 4 == 0:
                print(step, round(loss.item(), 4))
        del features
        torch.save(model.state_dict(), ckpt)


if __name__ == "__main__":
    main()
