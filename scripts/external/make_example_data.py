"""Generated stand-ins for the datasets of the pytorch/examples programs in
the README's table "Programs from other projects" (their own data is a
download): images in the BSDS300 layout (super_resolution: copy
bsds/dataset next to its main.py), an image folder of 2 classes (imagenet's
main.py D), files in Cora's format (gat: copy cora/ next to its main.py)
and 128 small images for ddpm_trainer_readme.py (ddpm/), and Cora in
Planetoid's pickled format (pytorch_geometric's examples: copy planetoid/ to
their data/Planetoid). Writes them under
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
# Cora in Planetoid's pickled format, for pytorch_geometric's examples
# (gcn.py, gat.py ...: Planetoid(root, "Cora") reads data/Planetoid/Cora/raw
# beside their folder): 140 labelled training nodes, 500 validation, 1000
# test, 2708 in all; sparse features, one-hot labels, an adjacency dict.
import pickle
from collections import defaultdict
import scipy.sparse as sp
raw = "planetoid/Cora/raw"
os.makedirs(raw, exist_ok=True)
n_all, n_test = 2708, 1000
n_labelled = n_all - n_test
features = sp.csr_matrix((rng.random((n_all, 1433)) < 0.013).astype(np.float32))
labels = np.eye(7, dtype=np.int64)[rng.integers(7, size=n_all)]
graph = defaultdict(list)
for _ in range(5429):
    a, b = (int(v) for v in rng.choice(n_all, 2, replace=False))
    graph[a].append(b)
    graph[b].append(a)
test_index = rng.permutation(np.arange(n_labelled, n_all))
parts = {"x": features[:140], "y": labels[:140], "allx": features[:n_labelled],
         "ally": labels[:n_labelled], "tx": features[test_index], "ty": labels[test_index],
         "graph": graph}
for name, value in parts.items():
    with open(f"{raw}/ind.cora.{name}", "wb") as f:
        pickle.dump(value, f)
with open(f"{raw}/ind.cora.test.index", "w") as f:
    f.write("\n".join(map(str, test_index)) + "\n")
