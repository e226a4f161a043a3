#!/usr/bin/python3
"""Generates the small test images in profiles/inputs (lull profile --inputs).

They are made here, by this script, from arithmetic only (gradients, stripes,
discs, seeded noise): no photograph, nothing downloaded. Deterministic: the same
Pillow writes the same bytes. Run: /usr/bin/python3 profiles/make_inputs.py
"""
import os

import numpy as np
from PIL import Image

SIZE = 96
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "inputs")


def grid():
    y, x = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32) / (SIZE - 1)
    return x, y


def gradient():
    x, y = grid()
    return np.stack([x, y, 1 - x], axis=-1)


def stripes():
    x, y = grid()
    s = (np.sin((x + y) * 24) > 0).astype(np.float32)
    return np.stack([s, 0.5 * s + 0.25, 1 - s], axis=-1)


def disc():
    x, y = grid()
    d = ((x - 0.5) ** 2 + (y - 0.5) ** 2 < 0.12).astype(np.float32)
    return np.stack([0.9 * d + 0.05, 0.3 * d + 0.4, 0.6 - 0.5 * d], axis=-1)


def noise():
    rng = np.random.default_rng(7)
    return rng.random((SIZE, SIZE, 3), dtype=np.float32) * 0.6 + gradient() * 0.4


def main():
    images = [("01-gradient.png", gradient, "PNG"), ("02-stripes.jpg", stripes, "JPEG"),
              ("03-disc.png", disc, "PNG"), ("04-noise.jpg", noise, "JPEG")]
    for name, make, fmt in images:
        pixels = (np.clip(make(), 0, 1) * 255).astype(np.uint8)
        Image.fromarray(pixels, "RGB").save(os.path.join(HERE, name), fmt, **({"quality": 85} if fmt == "JPEG" else {}))


if __name__ == "__main__":
    main()
