"""PyTorch's side of the image loader benchmark: DataLoader + torchvision ImageFolder with
RandomResizedCrop(224), RandomHorizontalFlip, ToTensor, Normalize; prints images per second of
the best of EPOCHS epochs as JSON. Counterpart: scripts/perf/image_folder.lua.
    /usr/bin/python3 scripts/perf/image_folder.py ROOT WORKERS [BATCH] [EPOCHS]
"""
import json
import sys
import time

import torch
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


def main():
    root, workers = sys.argv[1], int(sys.argv[2])
    batch = int(sys.argv[3]) if len(sys.argv) > 3 else 64
    epochs = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    torch.set_num_threads(1)
    tf = transforms.Compose([
        transforms.RandomResizedCrop(224),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
    ])
    ds = datasets.ImageFolder(root, transform=tf)
    loader = DataLoader(ds, batch_size=batch, shuffle=True, num_workers=workers,
                        persistent_workers=workers > 0)
    best = 0.0
    for _ in range(epochs):
        start = time.perf_counter()
        n = 0
        for x, y in loader:
            n += x.shape[0]
        best = max(best, n / (time.perf_counter() - start))
    print(json.dumps({"images": len(ds), "workers": workers, "images_per_second": best}))


if __name__ == "__main__":
    main()
