"""Synthetic CIFAR-10 in torchvision's format (random 32x32 images: five
training batches of 256 and a test batch of 256, pickled as the download's
cifar-10-batches-py), in place of the download, for pytorch-ignite's
cifar10 example in the README's table "Programs from other projects".

    python3 scripts/external/make_cifar10.py ROOT PATCH_DIR

torchvision checks each file's md5, which random data cannot match:
PATCH_DIR gets a sitecustomize.py that waives those checks (put PATCH_DIR on
PYTHONPATH; memlife's own sitecustomize chains to it).
"""
import os
import pickle
import sys

import numpy as np

SITECUSTOMIZE = '''\
# Synthetic CIFAR-10 (scripts/external/make_cifar10.py) stands in for the
# download; its md5 cannot match.
try:
    import torchvision.datasets.cifar as _cifar
    _cifar.CIFAR10._check_integrity = lambda self: True
    _cifar.check_integrity = lambda *args, **kwargs: True
except Exception:
    pass
'''


def write(root, per_batch=256):
    rng = np.random.default_rng(0)
    folder = os.path.join(root, "cifar-10-batches-py")
    os.makedirs(folder, exist_ok=True)
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        batch = {"data": (rng.random((per_batch, 3072)) * 255).astype(np.uint8),
                 "labels": rng.integers(0, 10, per_batch).tolist()}
        with open(os.path.join(folder, name), "wb") as f:
            pickle.dump(batch, f)
    with open(os.path.join(folder, "batches.meta"), "wb") as f:
        pickle.dump({"label_names": [f"class{i}" for i in range(10)]}, f)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    write(sys.argv[1])
    os.makedirs(sys.argv[2], exist_ok=True)
    with open(os.path.join(sys.argv[2], "sitecustomize.py"), "w") as f:
        f.write(SITECUSTOMIZE)
