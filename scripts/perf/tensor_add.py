#!/usr/bin/env python3
"""Python side of scripts/perf/tensor_add.lua: N calls of a + b on 16-element tensors.
  /usr/bin/python3 scripts/perf/tensor_add.py [N]"""
import json, sys, time
import torch

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
torch.set_num_threads(1)
a, b = torch.ones(16), torch.ones(16)
for _ in range(10000):
    a + b
t0 = time.process_time()
for _ in range(n):
    a + b
seconds = time.process_time() - t0
print(json.dumps({"impl": "pytorch-python", "calls": n, "ns_per_call": round(seconds * 1e9 / n, 1)}))
