#!/usr/bin/python3
"""Writes tests/surface/reference_names.tsv: the PyTorch names that pytorch/examples' programs and
torchvision's classification models call, which docs/lua-api/coverage.md measures the engine's
Lua surface against (tests/surface/coverage_spec.lua checks the page is current).

Run by hand at development time, never by CI (it needs Debian's python3-torch and
python3-torchvision, and a copy of pytorch/examples):

    git --git-dir=/path/to/examples.git archive COMMIT | tar -x -C /tmp/examples
    /usr/bin/python3 tests/surface/gather_reference.py /tmp/examples COMMIT

What counts, found with Python's ast on every .py file:
  - torch.<name>            functions and dtypes of the torch namespace (torch.cat, torch.float32)
  - torch.nn.<Name>         layers, containers and losses (nn.Linear, nn.CrossEntropyLoss)
  - torch.nn.functional.<name>, torch.nn.init.<name>, torch.nn.utils.<name>
  - torch.optim.<Name>, torch.optim.lr_scheduler.<Name>
  - torch.Tensor.<name>     a method called or an attribute read on any value, when
                            torch.Tensor has it (x.view(...), x.data, x.shape)
  - torch.nn.Module.<name>  the same for nn.Module (model.parameters(), m.weight)
  - torch.optim.Optimizer.<name>
Other namespaces (torch.distributed, torch.utils.data, torch.cuda, torch.fx, torch.onnx,
torch.multiprocessing, torchvision's datasets and transforms...) are left out: the engine's own
libraries stand for them (its data pipelines, engine train --nproc, --device), and the column
`scope` of the coverage page says so.
"""
import ast
import collections
import os
import sys

import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

HERE = os.path.dirname(os.path.abspath(__file__))
TV_MODELS = os.path.join(os.path.dirname(torchvision.__file__), 'models')
# torchvision.models' classification families (detection, segmentation, video, optical flow and
# quantization need torchvision.ops or other libraries the engine does not aim at)
TV_SKIPPED = {'detection', 'segmentation', 'video', 'optical_flow', 'quantization',
              'feature_extraction.py'}  # torch.fx's feature extractor, not a model

# the namespaces whose names count (gather_pytorch_names.py lists them all; the owners' methods
# are found on values below)
from gather_pytorch_names import NAMESPACES as _ALL
NAMESPACES = {k: v for k, v in _ALL.items()
              if k not in ('torch.linalg', 'torch.autograd', 'torch.Tensor', 'torch.nn.Module',
                           'torch.optim.Optimizer')}
MODULE = object()
# every public name of the namespaces, by the identity of what it names: the first namespace
# that has it names it (torch.nn.modules.linear.Linear is torch.nn.Linear)
CANONICAL = {}
_OWN = set()  # values named by their own name already
for _ns_name, _ns in NAMESPACES.items():
    for _name in dir(_ns):
        _value = getattr(_ns, _name)
        # functions, classes and dtypes (torch.float32): not constants such as TYPE_CHECKING
        named = callable(_value) or isinstance(_value, torch.dtype)
        if not _name.startswith('_') and not isinstance(_value, type(torch)) and named:
            # an alias (torch.obj is zeros_like, a loop variable left in torch's namespace)
            # gives way to the name the value calls itself
            own = getattr(_value, '__name__', None) == _name
            if id(_value) not in CANONICAL or (own and id(_value) not in _OWN):
                CANONICAL[id(_value)] = _ns_name + '.' + _name
            if own:
                _OWN.add(id(_value))
OWNERS = [('torch.Tensor', torch.Tensor), ('torch.nn.Module', torch.nn.Module),
          ('torch.optim.Optimizer', torch.optim.Optimizer)]
# attribute names too generic to say what they are read on (dicts, strings, files, lists)
GENERIC = {'append', 'items', 'keys', 'values', 'get', 'update', 'format', 'join', 'split',
           'strip', 'write', 'read', 'close', 'pop', 'extend', 'index', 'count', 'copy',
           'add', 'insert', 'remove', 'clear', 'sort', 'replace', 'lower', 'upper', 'startswith',
           'endswith', 'encode', 'decode', 'type', 'name', 'data_ptr', 'real', 'imag', 'names',
           'dump', 'load', 'save',
           'resize'}  # PIL's Image.resize where the examples call it (super_resolution, fast_neural_style)


def dotted(node):
    """'a.b.c' for an attribute chain on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return '.'.join(reversed(parts))
    return None


class Gatherer(ast.NodeVisitor):
    def __init__(self, found, where):
        self.found, self.where = found, where
        self.aliases = {}  # local name -> full dotted name it stands for

    def visit_Import(self, node):
        for a in node.names:
            self.aliases[a.asname or a.name.split('.')[0]] = a.name if a.asname else a.name.split('.')[0]

    def visit_ImportFrom(self, node):
        if not node.module:
            return
        for a in node.names:
            self.aliases[a.asname or a.name] = node.module + '.' + a.name

    def resolve(self, name):
        head, _, rest = name.partition('.')
        if head in self.aliases:
            full = self.aliases[head]
            return full + ('.' + rest if rest else '')
        return None

    def record(self, name):
        self.found[name].add(self.where)

    def visit_Call(self, node):
        if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) and \
                node.func.value.id == 'self' and hasattr(torch.nn.Module, node.func.attr):
            self.record('torch.nn.Module.' + node.func.attr)  # self.parameters()
        self.generic_visit(node)

    def canonical(self, full):
        """The namespace name of what an imported path stands for (torch.nn.modules.transformer.
        TransformerEncoder is torch.nn.TransformerEncoder); MODULE for a module; None otherwise."""
        head, *rest = full.split('.')
        if head not in ('torch',):
            return None
        value = torch
        for part in rest:
            value = getattr(value, part, None)
            if value is None:
                return None
        if isinstance(value, type(torch)):
            return MODULE
        return CANONICAL.get(id(value))

    def visit_Attribute(self, node):
        chain = dotted(node)
        full = self.resolve(chain) if chain else None
        if full:
            name = self.canonical(full)
            if name and name is not MODULE:
                self.record(name)
            return  # a path through imported modules (torch.jit.trace, os.path.join)
        # self.<field> is the program's own field (self.stride), and only what is read counts
        own_field = isinstance(node.value, ast.Name) and node.value.id == 'self'
        if isinstance(node.ctx, ast.Load) and not own_field and node.attr not in GENERIC and \
                not node.attr.startswith('_'):
            for owner, cls in OWNERS:
                if hasattr(cls, node.attr):
                    self.record(owner + '.' + node.attr)
        self.generic_visit(node)

    def visit_Name(self, node):
        # a name imported from a namespace and used bare (from torch.optim.lr_scheduler import StepLR)
        full = self.aliases.get(node.id)
        if full:
            name = self.canonical(full)
            if name and name is not MODULE:
                self.record(name)


def gather(root, label, found, skip=()):
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in skip and not d.startswith('.'))
        for f in sorted(files):
            if not f.endswith('.py') or f in skip:
                continue
            path = os.path.join(folder, f)
            rel = label + '/' + os.path.relpath(path, root)
            try:
                tree = ast.parse(open(path, encoding='utf-8').read())
            except SyntaxError:
                continue
            Gatherer(found, rel).visit(tree)


def main():
    if len(sys.argv) != 3:
        sys.exit('usage: gather_reference.py EXAMPLES_DIR EXAMPLES_COMMIT')
    examples, commit = sys.argv[1], sys.argv[2]
    found = collections.defaultdict(set)
    # the C++ examples' helpers and the docs' configuration are not programs; torch.fx's programs
    # transform Python code (tracer.trace(...) there is no tensor's method)
    gather(examples, 'examples', found, skip={'cpp', 'docs', 'fx'})
    gather(TV_MODELS, 'torchvision/models', found, skip=TV_SKIPPED)
    out = os.path.join(HERE, 'reference_names.tsv')
    with open(out, 'w') as f:
        f.write('# The PyTorch names pytorch/examples and torchvision.models call: written by\n')
        f.write('# tests/surface/gather_reference.py, do not edit.\n')
        f.write(f'# pytorch/examples {commit}\n')
        f.write(f'# torchvision {torchvision.__version__} (Debian python3-torchvision), '
                f'models/ without {", ".join(sorted(TV_SKIPPED))}\n')
        f.write('# pytorch/examples without cpp/, docs/ and fx/ (torch.fx rewrites Python code)\n')
        f.write(f'# torch {torch.__version__}\n')
        f.write('name\tfiles\tfirst file\n')
        for name in sorted(found):
            files = sorted(found[name])
            f.write(f'{name}\t{len(files)}\t{files[0]}\n')
    print(f'{len(found)} names -> {out}')


if __name__ == '__main__':
    main()
