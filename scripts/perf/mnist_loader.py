"""PyTorch's side of the in-memory loader benchmark: Fashion-MNIST's 60000 training images as
tensors (normalised once, up front), a TensorDataset and a DataLoader with shuffling at batch
BATCH in the main process (num_workers=0, the usual choice for in-memory tensors). Prints the
best epoch time of EPOCHS as JSON. Counterpart: scripts/perf/mnist_loader.lua.
    /usr/bin/python3 scripts/perf/mnist_loader.py [BATCH] [EPOCHS] [WORKERS]
"""
import gzip
import json
import sys
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset

ROOT = "/usr/share/datasets/fashion-mnist/"


def read(name, offset):
    with gzip.open(ROOT + name) as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


def main():
    batch = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    workers = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    torch.set_num_threads(1)
    x = torch.from_numpy(read("train-images-idx3-ubyte.gz", 16).copy()).view(-1, 1, 28, 28)
    x = (x.float() / 255 - 0.2860) / 0.3530
    y = torch.from_numpy(read("train-labels-idx1-ubyte.gz", 8).astype(np.int64))
    loader = DataLoader(TensorDataset(x, y), batch_size=batch, shuffle=True, num_workers=workers)
    best = float("inf")
    for _ in range(epochs):
        start = time.perf_counter()
        n = 0
        for xb, _ in loader:
            n += xb.shape[0]
        assert n == 60000
        best = min(best, time.perf_counter() - start)
    print(json.dumps({"batch": batch, "epoch_seconds": best}))


if __name__ == "__main__":
    main()
