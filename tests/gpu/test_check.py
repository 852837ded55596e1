#!/usr/bin/env python3
"""scripts/gpu/check on a machine without a GPU: the plan (--dry-run), its refusals, and the
table it makes from a check's records (made-up figures)."""
import importlib.machinery
import importlib.util
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECK = os.path.join(REPO, 'scripts', 'gpu', 'check')


def fail(message):
    print('FAIL: ' + message)
    sys.exit(1)


def run(*args):
    done = subprocess.run([sys.executable, CHECK] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    return done.returncode, done.stdout


def load_check():
    loader = importlib.machinery.SourceFileLoader('gpu_check', CHECK)
    spec = importlib.util.spec_from_loader('gpu_check', loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_dry_run():
    code, out = run('--dry-run', '--out', '/nonexistent/out')
    if code != 0:
        fail('--dry-run exited %d:\n%s' % (code, out))
    for step in ['build:', 'info:', 'openmp:', 'gpu_tests:', 'train mlp b64 float32:',
                 'train mnist_cnn b64 bfloat16:', 'train resnet50 b128 float16:', 'inference:',
                 'readme_job:', 'cpu_wheel:', '-L gpu', 'OMP_DISPLAY_ENV', '--cuda_graphs true',
                 '/nonexistent/out/gpu-check.md', 'monitor:', 'profile:', '--profile']:
        if step not in out:
            fail('--dry-run does not say %r:\n%s' % (step, out))
    if os.path.exists('/nonexistent/out'):
        fail('--dry-run created its output folder')
    code, out = run('--dry-run', '--skip-build')
    if code != 0 or 'build:' in out:
        fail('--skip-build still plans a build:\n' + out)
    # ResNet-50 training comes first, then its trace, before the rest (issue 58)
    order = [line.split(': ')[0].split('. ', 1)[-1].strip() for line in out.splitlines()
             if line[:3].strip().rstrip('.').isdigit()]
    if order[:5] != ['info', 'train resnet50 b64 float32', 'train resnet50 b64 bfloat16',
                     'train resnet50 b64 float16', 'profile']:
        fail('the check does not start with ResNet-50 training and its trace: %r' % order)


def test_refusals():
    code, out = run('--budget', '-5')
    if code != 2 or '--budget must be more than 0 seconds' not in out:
        fail('a negative budget: exit %d, %s' % (code, out))
    code, out = run('--frobnicate')
    if code != 2:
        fail('an unknown option exited %d' % code)


def test_table():
    check = load_check()
    records = [
        {'step': 'info', 'text': 'cuda:0   gpu_name NVIDIA H100'},
        {'step': 'train', 'impl': 'engine', 'model': 'mlp', 'batch': 64, 'dtype': 'float32',
         'mode': 'eager', 'p50_ms': 0.5, 'throughput': 128000.0},
        {'step': 'train', 'impl': 'engine', 'model': 'mlp', 'batch': 64, 'dtype': 'float32',
         'mode': 'cuda_graphs', 'error': 'this build has no --cuda_graphs'},
        {'step': 'train', 'impl': 'pytorch', 'model': 'mlp', 'batch': 64, 'dtype': 'float32',
         'mode': 'sync', 'throughput': 80000.0},
        {'step': 'train', 'impl': 'pytorch', 'model': 'mlp', 'batch': 64, 'dtype': 'float32',
         'mode': 'pipelined', 'throughput': 160000.0},
        {'step': 'train', 'impl': 'engine', 'model': 'resnet50', 'batch': 64, 'dtype': 'bfloat16',
         'mode': 'eager', 'p50_ms': 30.0, 'throughput': 2000.0, 'throughput_pipelined': 2300.0},
        {'step': 'train', 'impl': 'engine', 'model': 'resnet50', 'batch': 64, 'dtype': 'bfloat16',
         'mode': 'best', 'p50_ms': 20.0, 'throughput': 3000.0, 'throughput_pipelined': 3600.0},
        {'step': 'train', 'impl': 'pytorch', 'model': 'resnet50', 'batch': 64,
         'dtype': 'bfloat16', 'mode': 'sync', 'throughput': 2100.0},
        {'step': 'train', 'impl': 'pytorch', 'model': 'resnet50', 'batch': 64,
         'dtype': 'bfloat16', 'mode': 'pipelined', 'throughput': 2400.0},
        {'step': 'train', 'impl': 'pytorch', 'model': 'resnet50', 'batch': 64,
         'dtype': 'bfloat16', 'mode': 'best', 'throughput': 3000.0},
        {'step': 'profile', 'ok': True, 'trace': '/out/resnet50-eager.json', 'bytes': 1234},
        {'step': 'inference', 'impl': 'engine', 'model': 'mlp', 'batch': 64, 'dtype': 'float32',
         'p50_ms': 0.10},
        {'step': 'inference', 'impl': 'pytorch', 'model': 'mlp', 'dtype': 'float32',
         'p50_ms': 0.15},
        {'step': 'readme_job', 'impl': 'engine', 'seconds_to_target': 4.0, 'seconds': 5.0,
         'accuracies': [0.88, 0.905]},
        {'step': 'readme_job', 'impl': 'pytorch', 'seconds_to_target': 12.0, 'seconds': 13.0,
         'accuracies': [0.89, 0.903]},
        {'step': 'nccl', 'case': '--nproc 1 --device cuda: a world of one through NCCL',
         'exit': 0, 'ok': True, 'same_series': True,
         'series': {'alone': [2.65, 1.83], 'nproc1': [2.65, 1.83]}},
        {'step': 'not_run', 'name': 'cpu_wheel', 'why': 'past the budget (500 s)'},
    ]
    text = check.table(records, elapsed=481)
    expected = [
        # a small model against PyTorch's synchronised loop: 128000 / 80000 = 1.60 against the
        # 1.2x line without graphs: met
        '| mlp | 64 | float32 | eager | 0.500 | 128000 | - | 80000 | 160000 | - | sync | 1.60 | '
        '>= 1.20x | met |',
        '| mlp | 64 | float32 | cuda_graphs | - | - | - | 80000 | 160000 | - | sync | - | '
        '>= 2.00x | this build has no --cuda_graphs |',
        # ResNet-50 pipelined against pipelined: 2300 / 2400 = 0.96 against 1.0x: missed
        '| resnet50 | 64 | bfloat16 | eager | 30.000 | 2000 | 2300 | 2100 | 2400 | 3000 | '
        'pipelined | 0.96 | >= 1.00x | missed |',
        # the engine's best against PyTorch's best: 3600 / 3000 = 1.20 against 1.15x: met
        '| resnet50 | 64 | bfloat16 | best | 20.000 | 3000 | 3600 | 2100 | 2400 | 3000 | best | '
        '1.20 | >= 1.15x | met |',
        'written: /out/resnet50-eager.json (1234 bytes)',
        '| mlp | float32 | 0.100 | 0.150 | 1.50 | met |',
        'PyTorch/engine to 0.90: 3.00 (target >= 2x: met)',
        '| engine | 4.0 | 5.0 | 0.8800, 0.9050 |',
        '--nproc 1 --device cuda: a world of one through NCCL: exit 0, ok yes, the same series '
        'as without a group: yes; {"alone": [2.65, 1.83], "nproc1": [2.65, 1.83]}',
        '- cpu_wheel: past the budget (500 s)',
        '- the check took 481 s',
        'cuda:0   gpu_name NVIDIA H100',
    ]
    for line in expected:
        if line not in text:
            fail('the table lacks\n%s\nin:\n%s' % (line, text))


# What engine bench --json and the PyTorch references print (read off the H100 run of
# 2026-11-26): their own impl, model and dtype keys must not clash with the record's.
ENGINE_LINE = ('{"impl":"engine","model":"mlp","phase":"training","batch_size":64,"world_size":1,'
               '"device":"cuda:0","dtype":"float32","batches":50,"p50_ms":0.4271,'
               '"throughput":145379.4,"pipelined_ms":0.4,"throughput_pipelined":160000.0}')
TORCH_LINES = ('{"impl": "pytorch", "model": "mlp", "dtype": "float32", "mode": "sync", '
               '"batch_size": 64, "p50_ms": 0.5, "throughput": 120000.0}\n'
               '{"impl": "pytorch", "model": "mlp", "dtype": "float32", "mode": "pipelined", '
               '"batch_size": 64, "p50_ms": 0.45, "throughput": 130000.0}')


def test_records_from_real_lines():
    check = load_check()
    out = os.path.join(os.environ.get('TMPDIR', '/tmp'), 'gpu-check-test-%d' % os.getpid())
    os.makedirs(out, exist_ok=True)
    ctx = check.Context(out)
    ctx.sh = lambda cmd, **kw: (0, TORCH_LINES if 'torch' in ' '.join(cmd) else ENGINE_LINE)
    check.engine_has_flag = lambda engine, flag: True
    check.training_pair(ctx, '/engine', 'mlp', 64, 'float32')
    check.inference(ctx, '/engine')
    check.cpu_wheel(ctx, '/engine')
    engine = [r for r in ctx.records if r.get('impl') == 'engine']
    if len(engine) != 2 + 3 * 3 + 1:  # eager and graphs; 3 models x 3 dtypes; the CPU point
        fail('engine records: %r' % engine)
    for r in ctx.records:
        if r.get('error') or 'throughput' not in r:
            fail('a record without its figures: %r' % r)
    text = check.table(ctx.records)
    line = ('| mlp | 64 | float32 | eager | 0.427 | 145379 | 160000 | 120000 | 130000 | - | sync | '
            '1.21 |')
    if line not in text:
        fail('the table lacks\n%s\nin:\n%s' % (line, text))
    for name in os.listdir(out):
        os.remove(os.path.join(out, name))
    os.rmdir(out)


if __name__ == '__main__':
    test_dry_run()
    test_refusals()
    test_table()
    test_records_from_real_lines()
    print('scripts/gpu/check: 4 passed, 0 failed')
