"""Synthetic MNIST in torchvision's raw format (random 28x28 images, 3,000
for training and 1,000 for testing) under each ROOT/MNIST/raw, in place of
the download, for the MNIST programs of the README's table "Programs from
other projects" (the Lightning Fabric examples read ../../../Datasets).

    python3 scripts/external/make_mnist.py ROOT...
"""
import os, struct, sys, numpy as np
rng = np.random.default_rng(0)
def write(root, n_train=3000, n_test=1000):
    raw = os.path.join(root, "MNIST", "raw"); os.makedirs(raw, exist_ok=True)
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        imgs = (rng.random((n, 28, 28)) * 255).astype(np.uint8)
        labels = rng.integers(0, 10, n).astype(np.uint8)
        with open(os.path.join(raw, f"{prefix}-images-idx3-ubyte"), "wb") as f:
            f.write(struct.pack(">IIII", 2051, n, 28, 28)); f.write(imgs.tobytes())
        with open(os.path.join(raw, f"{prefix}-labels-idx1-ubyte"), "wb") as f:
            f.write(struct.pack(">II", 2049, n)); f.write(labels.tobytes())
for root in sys.argv[1:]:
    write(root)
