#!/usr/bin/python3
"""PyTorch's side of scripts/perf/examples_step.sh: the training step of each pytorch/examples
program that scripts/examples/ ports, timed with the original's own classes and loop body on the
sizes the shell script gives the engine. A benchmark, run by hand, never by CI:
    /usr/bin/python3 scripts/perf/examples_step.py EXAMPLES_DIR NAME [key=value ...]

The originals' model classes are read from their files: their imports, classes and functions are
run, not their module-level code (which downloads data and trains). Prints one line:
`NAME mean_ms N` over N timed steps after warm-up steps.
"""
import argparse
import ast
import sys
import time

import torch
import torch.nn as nn


def definitions(path, **names):
    """The imports, classes and functions of the program at `path`, run in a namespace holding
    `names` first (the globals its classes read: args, device, nz...)."""
    with open(path) as f:
        tree = ast.parse(f.read())
    kept = [node for node in tree.body
            if isinstance(node, (ast.Import, ast.ImportFrom, ast.ClassDef, ast.FunctionDef))]
    namespace = dict(names)
    sys.path.insert(0, path.rsplit('/', 1)[0])
    for node in kept:
        try:
            exec(compile(ast.Module(body=[node], type_ignores=[]), path, 'exec'), namespace)
        except ImportError:  # what only the program's plotting needs (matplotlib)
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                raise
    return namespace


def word_language_model(examples, o):
    m = definitions(f'{examples}/word_language_model/model.py')
    ntokens, bsz, bptt = int(o['ntokens']), int(o['batch_size']), int(o['bptt'])
    if o['model'] == 'Transformer':
        model = m['TransformerModel'](ntokens, 200, 2, 200, 2, 0.2)
    else:
        model = m['RNNModel'](o['model'], ntokens, 200, 200, 2, 0.2)
    data = torch.randint(ntokens, (bptt, bsz))
    targets = torch.randint(ntokens, (bptt * bsz,))
    criterion, lr = nn.NLLLoss(), 20.0
    hidden = None if o['model'] == 'Transformer' else model.init_hidden(bsz)
    model.train()

    def step():
        nonlocal hidden
        model.zero_grad()
        if hidden is None:
            output = model(data).view(-1, ntokens)
        else:
            hidden = tuple(h.detach() for h in hidden) if isinstance(hidden, tuple) \
                else hidden.detach()
            output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
    return step


def vae(examples, o):
    m = definitions(f'{examples}/vae/main.py')
    model = m['VAE']()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    data = torch.rand(int(o['batch_size']), 1, 28, 28)

    def step():
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data)
        loss = m['loss_function'](recon_batch, data, mu, logvar)
        loss.backward()
        loss.item()
        optimizer.step()
    return step


def mnist_rnn(examples, o):
    m = definitions(f'{examples}/mnist_rnn/main.py')
    model = m['Net']()
    optimizer = torch.optim.Adadelta(model.parameters(), lr=0.1)
    data = torch.randn(int(o['batch_size']), 1, 28, 28)
    target = torch.randint(10, (int(o['batch_size']),))
    model.train()

    def step():
        optimizer.zero_grad()
        loss = torch.nn.functional.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
    return step


def mnist_forward_forward(examples, o):
    args = argparse.Namespace(lr=0.03, threshold=2.0, epochs=1, log_interval=10**9)
    m = definitions(f'{examples}/mnist_forward_forward/main.py', args=args,
                    device=torch.device('cpu'))
    n = int(o['train_size'])
    layer = m['Layer'](784, 500)
    x = torch.randn(n, 784)
    y = torch.randint(10, (n,))
    x_pos = m['overlay_y_on_x'](x, y)
    x_neg = m['overlay_y_on_x'](x, (y + 1) % 10)

    def step():  # one iteration of Layer.train's loop
        g_pos = layer.forward(x_pos).pow(2).mean(1)
        g_neg = layer.forward(x_neg).pow(2).mean(1)
        loss = torch.log1p(torch.exp(torch.cat([-g_pos + layer.threshold,
                                                 g_neg - layer.threshold]))).mean()
        layer.opt.zero_grad()
        loss.backward()
        layer.opt.step()
    return step


def dcgan(examples, o):
    nz, ngf, ndf = int(o['nz']), int(o['ngf']), int(o['ndf'])
    m = definitions(f'{examples}/dcgan/main.py', ngpu=0, nz=nz, ngf=ngf, ndf=ndf, nc=3)
    netG, netD = m['Generator'](0), m['Discriminator'](0)
    netG.apply(m['weights_init'])
    netD.apply(m['weights_init'])
    criterion = nn.BCELoss()
    optimizerD = torch.optim.Adam(netD.parameters(), lr=0.0002, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))
    batch = int(o['batch_size'])
    real = torch.rand(batch, 3, 64, 64) * 2 - 1

    def step():  # the loop body of dcgan/main.py
        netD.zero_grad()
        label = torch.full((batch,), 1.0)
        output = netD(real)
        errD_real = criterion(output, label)
        errD_real.backward()
        output.mean().item()
        noise = torch.randn(batch, nz, 1, 1)
        fake = netG(noise)
        label.fill_(0.0)
        output = netD(fake.detach())
        errD_fake = criterion(output, label)
        errD_fake.backward()
        output.mean().item()
        optimizerD.step()
        netG.zero_grad()
        label.fill_(1.0)
        output = netD(fake)
        errG = criterion(output, label)
        errG.backward()
        output.mean().item()
        optimizerG.step()
    return step


def super_resolution(examples, o):
    m = definitions(f'{examples}/super_resolution/model.py')
    factor, batch = int(o['upscale_factor']), int(o['batch_size'])
    crop = 256 - 256 % factor
    model = m['Net'](upscale_factor=factor)
    criterion = nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    input = torch.rand(batch, 1, crop // factor, crop // factor)
    target = torch.rand(batch, 1, crop, crop)

    def step():  # the loop body of main.py's train()
        optimizer.zero_grad()
        loss = criterion(model(input), target)
        loss.item()
        loss.backward()
        optimizer.step()
    return step


def time_sequence_prediction(examples, o):
    import h5py
    m = definitions(f'{examples}/time_sequence_prediction/train.py')
    with h5py.File(o['data']) as f:  # the waves the engine's run reads
        input, target = torch.from_numpy(f['input'][()]), torch.from_numpy(f['target'][()])
    seq = m['Sequence']().double()
    criterion = nn.MSELoss()
    optimizer = torch.optim.LBFGS(seq.parameters(), lr=0.8)

    def step():
        def closure():
            optimizer.zero_grad()
            loss = criterion(seq(input), target)
            loss.backward()
            return loss
        optimizer.step(closure)
    return step


def main():
    examples, name = sys.argv[1], sys.argv[2]
    options = dict(a.split('=', 1) for a in sys.argv[3:])
    torch.set_num_threads(int(options.pop('threads', 2)))
    warmup, steps = int(options.pop('warmup', 5)), int(options.pop('steps', 30))
    torch.manual_seed(1)
    step = globals()[name](examples, options)
    for _ in range(warmup):
        step()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    print(f'{name} {(time.perf_counter() - start) * 1000 / steps:.3f} {steps}')


if __name__ == '__main__':
    main()
