# Ultralytics YOLO (pip install ultralytics; 8.4.190 here) trained from its
# model YAMLs (random init, nothing downloaded) on generated data:
#   python3 ultralytics_yolo.py detect [EPOCHS]   yolov8n on coloured boxes, 2 classes
#   python3 ultralytics_yolo.py classify          yolov8n-cls on an image folder, then predict
# nbs equal to the batch makes each batch an optimizer step (the default
# nbs=64 accumulates 8 batches of 8).
import os
import random
import sys

import numpy as np
from PIL import Image
from ultralytics import YOLO

from _two_colour_images import image_folder

what = sys.argv[1]
root = os.path.abspath("yolo_data")
rng = np.random.default_rng(0)
common = dict(device="cpu", plots=False, amp=False, project="runs", exist_ok=True, verbose=False, batch=8, nbs=8)
if what == "detect":
    random.seed(0)
    for split, n in (("train", 64), ("val", 16)):
        os.makedirs(f"{root}/images/{split}", exist_ok=True)
        os.makedirs(f"{root}/labels/{split}", exist_ok=True)
        for i in range(n):
            img = (rng.random((96, 96, 3)) * 80).astype(np.uint8)
            lines = []
            for _ in range(random.randint(1, 3)):
                c, w, h = random.randint(0, 1), random.randint(16, 40), random.randint(16, 40)
                x, y = random.randint(0, 96 - w), random.randint(0, 96 - h)
                img[y:y + h, x:x + w] = (220, 40, 40) if c == 0 else (40, 220, 40)
                lines.append(f"{c} {(x + w / 2) / 96:.5f} {(y + h / 2) / 96:.5f} {w / 96:.5f} {h / 96:.5f}")
            Image.fromarray(img).save(f"{root}/images/{split}/{i:03d}.jpg")
            with open(f"{root}/labels/{split}/{i:03d}.txt", "w") as f:
                f.write("\n".join(lines) + "\n")
    with open("yolo_data.yaml", "w") as f:
        f.write(f"path: {root}\ntrain: images/train\nval: images/val\nnames:\n  0: red\n  1: green\n")
    epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    YOLO("yolov8n.yaml").train(data="yolo_data.yaml", epochs=epochs, imgsz=96, workers=2, name="detect", **common)
elif what == "classify":
    image_folder(f"{root}/cls")
    model = YOLO("yolov8n-cls.yaml")
    model.train(data=f"{root}/cls", epochs=2, imgsz=64, name="classify", **common)
    results = model.predict([f"{root}/cls/val/red/{i}.jpg" for i in range(8)], verbose=False)
    print("predicted", len(results))
else:
    sys.exit(f"ultralytics_yolo.py: unknown program {what!r}")
