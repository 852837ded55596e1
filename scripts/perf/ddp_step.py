#!/usr/bin/env python3
"""The DDP side of scripts/perf/ddp_scaling.sh: what scripts/perf/dist_step.lua trains, as a
PyTorch user writes it for torchrun: the same model (mnist_cnn or mlp), SGD (lr 0.01, momentum
0.9), NLL loss, Fashion-MNIST normalised as dist_step.lua does, each rank taking its share of one
shuffled order (DistributedSampler's rule) at a per-rank batch, DistributedDataParallel over
Gloo. The images are held in one tensor (no DataLoader workers), as the engine holds them.
Rank 0 prints one JSON line: samples per second of the world over the timed steps.

  python3 -m torch.distributed.run --nproc_per_node 2 scripts/perf/ddp_step.py --batch 32
"""
import argparse, gzip, json, os, sys, time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
# the reference networks of ../shared/bench (the project's benchmark folder beside the checkout)
sys.path.insert(0, os.environ.get('ENGINE_SHARED_BENCH',
                                  os.path.join(HERE, '..', '..', '..', 'shared', 'bench')))
from torch_baseline import build  # noqa: E402  (the same networks the other comparisons use)


def images(folder):
    with gzip.open(os.path.join(folder, 'train-images-idx3-ubyte.gz')) as f:
        x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28)
    with gzip.open(os.path.join(folder, 'train-labels-idx1-ubyte.gz')) as f:
        y = np.frombuffer(f.read(), np.uint8, offset=8)
    x = (torch.from_numpy(x.copy()).float() / 255 - 0.2860) / 0.3530
    return x, torch.from_numpy(y.copy()).long()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--model', default='mnist_cnn')
    ap.add_argument('--batch', type=int, default=32, help='per rank')
    ap.add_argument('--steps', type=int, default=300)
    ap.add_argument('--threads', type=int, default=1, help='per rank')
    ap.add_argument('--data', default='/usr/share/datasets/fashion-mnist')
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    dist.init_process_group('gloo')
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(1)
    model, _, _ = build(a.model)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)
    x, y = images(a.data)
    order = torch.randperm(len(x), generator=torch.Generator().manual_seed(1))[rank::world]
    ddp.train()
    dist.barrier()
    start = time.perf_counter()
    for step in range(a.steps):
        at = (step * a.batch) % (len(order) - a.batch)
        idx = order[at:at + a.batch]
        opt.zero_grad()
        F.nll_loss(ddp(x[idx]), y[idx]).backward()
        opt.step()
    dist.barrier()
    seconds = time.perf_counter() - start
    if rank == 0:
        print(json.dumps({'samples_per_second': a.batch * world * a.steps / seconds}))
    dist.destroy_process_group()


if __name__ == '__main__':
    main()
