"""Writes a folder of generated JPEGs, one subfolder per class, for the image loader benchmark.

Images are smooth gradients with noise and a few shapes, so they compress like photographs
rather than like random noise. Run with Debian's python3 (python3-pil comes with torchvision):
    /usr/bin/python3 scripts/perf/make_image_folder.py OUT_DIR [CLASSES] [PER_CLASS] [SIZE]
"""
import os
import sys

import numpy as np
from PIL import Image, ImageDraw


def main():
    out = sys.argv[1]
    classes = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    per_class = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    size = int(sys.argv[4]) if len(sys.argv) > 4 else 256
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32) / size
    for c in range(classes):
        folder = os.path.join(out, "class%02d" % c)
        os.makedirs(folder, exist_ok=True)
        for i in range(per_class):
            base = rng.uniform(0, 255, size=(3,))
            slope = rng.uniform(-120, 120, size=(3, 2))
            img = base[:, None, None] + slope[:, 0, None, None] * xx + slope[:, 1, None, None] * yy
            img = img + rng.normal(0, 12, size=img.shape)
            image = Image.fromarray(np.clip(img, 0, 255).astype(np.uint8).transpose(1, 2, 0))
            draw = ImageDraw.Draw(image)
            for _ in range(4):
                x0, y0 = rng.integers(0, size, 2)
                r = int(rng.integers(8, size // 3))
                draw.ellipse([x0 - r, y0 - r, x0 + r, y0 + r],
                             fill=tuple(int(v) for v in rng.integers(0, 256, 3)))
            image.save(os.path.join(folder, "img%04d.jpg" % i), quality=90)


if __name__ == "__main__":
    main()
