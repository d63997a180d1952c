"""Generated stand-ins for the datasets of the pytorch/examples programs in
the README's table "Programs from other projects" (their own data is a
download): images in the BSDS300 layout (super_resolution: copy
bsds/dataset next to its main.py), an image folder of 2 classes (imagenet's
main.py D), files in Cora's format (gat: copy cora/ next to its main.py)
and 128 small images for ddpm_trainer_readme.py (ddpm/). Writes them under
the current directory.

    python3 scripts/external/make_example_data.py
"""
import os, numpy as np
from PIL import Image
rng = np.random.default_rng(0)
def imgs(d, n, size):
    os.makedirs(d, exist_ok=True)
    for i in range(n):
        a = (rng.random((size[1], size[0], 3)) * 255).astype(np.uint8)
        Image.fromarray(a).save(os.path.join(d, f"{i:04d}.jpg"))
# BSDS300 layout for super_resolution
imgs("bsds/dataset/BSDS300/images/train", 40, (321, 481))
imgs("bsds/dataset/BSDS300/images/test", 10, (321, 481))
# image folder for imagenet main.py
for split, n in (("train", 48), ("val", 16)):
    for c in ("c0", "c1"):
        imgs(f"imgfolder/{split}/{c}", n // 2, (256, 256))
imgs("ddpm", 128, (32, 32))
# cora: 2708 papers, 1433 binary features, 7 classes, 5429 citations
os.makedirs("cora", exist_ok=True)
ids = rng.choice(1_000_000, 2708, replace=False)
classes = ["Case_Based","Genetic_Algorithms","Neural_Networks","Probabilistic_Methods","Reinforcement_Learning","Rule_Learning","Theory"]
with open("cora/cora.content", "w") as f:
    for i in ids:
        feats = (rng.random(1433) < 0.013).astype(int)
        feats[rng.integers(1433)] = 1
        f.write(str(i) + "\t" + "\t".join(map(str, feats)) + "\t" + classes[rng.integers(7)] + "\n")
with open("cora/cora.cites", "w") as f:
    for _ in range(5429):
        a, b = rng.choice(ids, 2, replace=False)
        f.write(f"{a}\t{b}\n")
