"""An image folder of two classes for the scripts of this folder: a red or
a green square on dark noise, in ROOT/train/{red,green} and
ROOT/val/{red,green}. Also a command, for programs that take a folder
(timm's train.py):
  python3 _two_colour_images.py ROOT [TRAIN VAL SIZE]"""
import os
import sys

import numpy as np
from PIL import Image


def image_folder(root, train=32, val=8, size=64):
    rng = np.random.default_rng(0)
    for split, n in (("train", train), ("val", val)):
        for name, colour in (("red", (220, 40, 40)), ("green", (40, 220, 40))):
            os.makedirs(f"{root}/{split}/{name}", exist_ok=True)
            for i in range(n):
                img = (rng.random((size, size, 3)) * 80).astype(np.uint8)
                img[size // 4:3 * size // 4, size // 4:3 * size // 4] = colour
                Image.fromarray(img).save(f"{root}/{split}/{name}/{i}.jpg")
    return root


if __name__ == "__main__":
    image_folder(sys.argv[1], *(int(a) for a in sys.argv[2:5]))
