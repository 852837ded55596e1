#!/usr/bin/env python3
"""PyTorch (Python, CUDA) reference for `engine bench --phase inference --device cuda`.

The models of torch_cuda_baseline.py (staged beside this check in .gpu-check/), in evaluation
mode under torch.inference_mode, a synthetic batch already on the GPU, autocast for bfloat16
and float16 (as the engine's --dtype), cudnn.benchmark on, the device synchronised after every
batch (as engine bench times one). One JSON line per (model, dtype).
  usage: torch_inference.py mlp,mnist_cnn,resnet50 float32,bfloat16,float16 BATCH N WARMUP
"""
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..',
                                '.gpu-check'))
from torch_cuda_baseline import build  # noqa: E402  (the same networks as the training side)


def run(name, dtype, batch, n, warmup):
    torch.manual_seed(1)
    model, shape, _, _ = build(name)
    model = model.cuda().eval()
    x = torch.randn(batch, *shape, device='cuda')
    amp = {'float16': torch.float16, 'bfloat16': torch.bfloat16}.get(dtype)
    ms = []
    with torch.inference_mode():
        for i in range(warmup + n):
            t0 = time.perf_counter()
            with torch.autocast('cuda', dtype=amp or torch.float32, enabled=amp is not None):
                model(x)
            torch.cuda.synchronize()
            if i >= warmup:
                ms.append((time.perf_counter() - t0) * 1000)
    mean = statistics.mean(ms)
    print(json.dumps({'impl': 'pytorch-python', 'torch': torch.__version__, 'model': name,
                      'dtype': dtype, 'phase': 'inference', 'batch_size': batch,
                      'mean_ms': round(mean, 4), 'p50_ms': round(statistics.median(ms), 4),
                      'throughput': round(batch * 1000 / mean, 1)}), flush=True)


def main():
    models, dtypes = sys.argv[1].split(','), sys.argv[2].split(',')
    batch, n, warmup = (int(v) for v in sys.argv[3:6])
    torch.backends.cudnn.benchmark = True
    for name in models:
        for dtype in dtypes:
            try:
                run(name, dtype, batch, n, warmup)
            except Exception as e:  # torchvision missing, out of memory: keep going
                print(json.dumps({'model': name, 'dtype': dtype, 'phase': 'inference',
                                  'error': str(e).splitlines()[0][:200]}), flush=True)


if __name__ == '__main__':
    main()
