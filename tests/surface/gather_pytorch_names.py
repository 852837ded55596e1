#!/usr/bin/python3
"""Writes engine/lua/surface/pytorch_names.txt: the public names of the PyTorch namespaces the
engine's Lua libraries stand for, one per line, so that a name a script reaches for and the
engine lacks is reported as PyTorch's (`nn has no 'BCELoss' (torch.nn.BCELoss) ...`) or as a typo.

Run by hand at development time with Debian's python3-torch, never by CI:
    /usr/bin/python3 tests/surface/gather_pytorch_names.py
"""
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, '..', '..', 'engine', 'lua', 'surface', 'pytorch_names.txt')

NAMESPACES = {
    'torch': torch,
    'torch.nn': torch.nn,
    'torch.nn.functional': torch.nn.functional,
    'torch.nn.init': torch.nn.init,
    'torch.nn.utils': torch.nn.utils,
    'torch.optim': torch.optim,
    'torch.optim.lr_scheduler': torch.optim.lr_scheduler,
    'torch.linalg': torch.linalg,
    'torch.autograd': torch.autograd,
    'torch.Tensor': torch.Tensor,
    'torch.nn.Module': torch.nn.Module,
    'torch.optim.Optimizer': torch.optim.Optimizer,
}


def main():
    names = set()
    for label, ns in NAMESPACES.items():
        for name in dir(ns):
            if name.startswith('_'):
                continue
            value = getattr(ns, name, None)
            if isinstance(value, type(torch)):
                continue  # a submodule (torch.cuda, torch.nn.modules)
            names.add(f'{label}.{name}')
    with open(OUT, 'w') as f:
        f.write(f'# PyTorch {torch.__version__}\'s public names: written by '
                'tests/surface/gather_pytorch_names.py, do not edit.\n')
        for name in sorted(names):
            f.write(name + '\n')
    print(f'{len(names)} names -> {os.path.normpath(OUT)}')


if __name__ == '__main__':
    main()
