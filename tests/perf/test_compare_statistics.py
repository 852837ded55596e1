#!/usr/bin/env python3
"""scripts/perf/compare's statistics and case selection, on made-up numbers (no timing).

  python3 tests/perf/test_compare_statistics.py ROOT
"""
import math
import os
import sys
from importlib.machinery import SourceFileLoader
from importlib.util import module_from_spec, spec_from_loader

root = sys.argv[1] if len(sys.argv) > 1 else os.getcwd()
path = os.path.join(root, 'scripts', 'perf', 'compare')
loader = SourceFileLoader('compare', path)
compare = module_from_spec(spec_from_loader('compare', loader))
loader.exec_module(compare)
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)


def coverage(n, k):
    """P(v_(k) <= true median <= v_(n+1-k)) for n draws of a continuous variable."""
    return 1 - 2 * sum(math.comb(n, i) for i in range(k)) / 2 ** n


# the interval is the narrowest order-statistic pair with at least 90% coverage
for n in range(1, 22):
    values = [10.0 * i for i in range(n, 0, -1)]  # given out of order on purpose
    low, high = compare.median_interval(values)
    k = int(round(low / 10))
    check(high == 10.0 * (n + 1 - k), 'n=%d: interval %s-%s is not symmetric' % (n, low, high))
    check(k == 1 or coverage(n, k) >= 0.90, 'n=%d: k=%d covers only %.3f' % (n, k, coverage(n, k)))
    check(k + 1 > (n + 1) // 2 or coverage(n, k + 1) < 0.90,
          'n=%d: k=%d is not the narrowest (k+1 covers %.3f)' % (n, k, coverage(n, k + 1)))
check(compare.median_interval([1.0, 2.0, 3.0, 4.0, 5.0]) == (1.0, 5.0), '5 rounds: min..max')
check(compare.median_interval(list(range(1, 10))) == (2, 8), '9 rounds: 2nd..8th')
check(compare.median_interval(list(range(1, 12))) == (3, 9), '11 rounds: 3rd..9th')

# verdicts against an upper bound (at most) and a lower bound (at least)
cases = [((0.95, 1.02), 1.03, 'at_most', 'met'), ((1.031, 1.2), 1.03, 'at_most', 'not met'),
         ((1.00, 1.05), 1.03, 'at_most', 'not resolved'), ((1.03, 1.03), 1.03, 'at_most', 'met'),
         ((1.41, 3.0), 1.40, 'at_least', 'met'), ((1.2, 1.39), 1.40, 'at_least', 'not met'),
         ((1.3, 1.5), 1.40, 'at_least', 'not resolved'), ((1.4, 1.4), 1.40, 'at_least', 'met')]
for (low, high), bound, kind, expected in cases:
    got = compare.verdict(low, high, bound, kind)
    check(got == expected, 'verdict(%s, %s, %s, %s) = %s, expected %s' % (
        low, high, bound, kind, got, expected))

# stability: spread is (max - min) / median; a program is judged against 5%, and its miss
# counts against it only when the C++ loop, alternating with it, held still
check(abs(compare.spread([1.0, 1.02, 0.98, 1.01, 0.99]) - 0.04) < 1e-12, 'spread of 0.98..1.02')
check(abs(compare.spread([0.3, 0.6, 0.6]) - 0.5) < 1e-12, 'spread of a bimodal command')
for own, host, expected in [(0.04, 0.30, 'met'), (0.05, 0.0, 'met'), (0.12, 0.03, 'not met'),
                            (0.12, 0.20, 'not shown (host)')]:
    got = compare.stability_verdict(own, host)
    check(got == expected, 'stability_verdict(%s, %s) = %s, expected %s' % (own, host, got,
                                                                           expected))
check(compare.STABILITY_PROGRAMS[0] == 'cpp' and
      all(p in compare.PROGRAMS for p in compare.STABILITY_PROGRAMS),
      'the stability table starts with the C++ loop and names known programs')

# every target names programs the tables have and cases that exist
for label, a, b, applies, bound, kind in compare.TARGETS:
    check(a in compare.PROGRAMS and b in compare.PROGRAMS, label + ': unknown program')
    check(kind in ('at_most', 'at_least'), label + ': unknown kind ' + kind)
    for case in applies or []:
        check(any(c[:3] == case for c in compare.CASES), label + ': unknown case %s' % (case,))

# --case keeps the table's order; an unknown case names the known ones and exits non-zero
picked = compare.select_cases(compare.CASES, ['mlp/64/inference', 'mlp/16/training'])
check([c[:3] for c in picked] == [('mlp', 16, 'training'), ('mlp', 64, 'inference')],
      '--case order: %s' % picked)
check(compare.select_cases(compare.CASES, None) == compare.CASES, 'no --case: every case')
try:
    compare.select_cases(compare.CASES, ['mlp/32/training'])
    failures.append('an unknown --case was accepted')
except SystemExit as e:
    message = str(e.code)
    check('mlp/32/training' in message and 'mlp/64/inference' in message,
          'unknown --case message: ' + message)

if failures:
    print('\n'.join('FAIL: ' + f for f in failures))
    sys.exit(1)
print('compare statistics: all checks passed')
