"""Impossible sizes fail before allocating: factories, views, repeat, arange, pad, histc and the
pools raise RuntimeError ("Storage size calculation overflowed ..." or "out of memory: tried to
allocate N bytes") instead of allocating until the OOM killer ends the process.

Each case runs in a child process under an address-space limit (RLIMIT_AS) of a few GiB above
its size after import, so a regression fails the test instead of exhausting the machine.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

K40 = 2 ** 40
OVERFLOW = "Storage size calculation overflowed"
OOM = "out of memory: tried to allocate"

# (expression, exception type name, message fragments); `x` is a (5, 2, 1, 5) input.
CASES = [
    # The reported case: window tables grew until the OOM killer ended the process.
    ("F.adaptive_max_pool2d_with_indices(x, 2**40)", "RuntimeError",
     ["[adaptive_max_pool2d]", OVERFLOW, "sizes=[5, 2, 1099511627776, 1099511627776]"]),
    ("F.adaptive_max_pool2d(x, (2**40, 1))", "RuntimeError", ["[adaptive_max_pool2d]", OOM]),
    ("F.adaptive_avg_pool2d(x, 2**40)", "RuntimeError", ["[adaptive_avg_pool2d]", OVERFLOW]),
    ("F.adaptive_avg_pool2d(x, (2**40, 1))", "RuntimeError", ["[adaptive_avg_pool2d]", OOM]),
    ("F.adaptive_max_pool1d(x[0], 2**40)", "RuntimeError", ["[adaptive_max_pool1d]", OOM]),
    ("F.adaptive_avg_pool3d(x, (2**40, 2**40, 2**40))", "RuntimeError", [OVERFLOW]),
    ("ember.empty(2**62)", "RuntimeError", ["[empty]", OVERFLOW]),
    ("ember.empty(2**32, 2**32, dtype=ember.uint8)", "RuntimeError", ["[empty]", OVERFLOW]),
    ("ember.zeros(2**31, 2**31, 4)", "RuntimeError",
     ["[zeros]", OVERFLOW + " with sizes=[2147483648, 2147483648, 4]"]),
    ("ember.ones(2**40)", "RuntimeError",
     ["[ones]", OOM + " 4398046511104 bytes"]),
    ("ember.full((2**40,), 1.5)", "RuntimeError", ["[full]", OOM]),
    ("ember.empty_strided((2**40, 2**40), (1, 1))", "RuntimeError", ["[empty_strided]", OOM]),
    ("ember.arange(2**62)", "RuntimeError", ["[arange]", OVERFLOW]),
    ("ember.arange(2**40)", "RuntimeError", ["[arange]", OOM + " 8796093022208 bytes"]),
    ("ember.linspace(0, 1, 2**40)", "RuntimeError", ["[linspace]", OOM]),
    ("ember.ones(1).expand(2**40, 2**40)", "RuntimeError", ["overflow"]),
    ("ember.empty(0).view(2**32, 2**32)", "RuntimeError", []),
    ("ember.ones(4).reshape(2**62, 4)", "RuntimeError", []),
    ("ember.ones(2, 2).repeat(2**40, 2**40)", "RuntimeError", ["[repeat]", OVERFLOW]),
    ("ember.ones(2, 2).repeat(2**33, 2**31)", "RuntimeError", ["[repeat]", OVERFLOW]),
    ("ember.ones(2, 2).repeat(2**40, 1)", "RuntimeError", ["[repeat]", OOM]),
    ("ember.ones(3).repeat_interleave(2**62)", "RuntimeError", ["[repeat_interleave]", OVERFLOW]),
    ("F.pad(x[0], (2**62, 2**62))", "RuntimeError", ["[pad]", OVERFLOW]),
    ("F.pad(x[0], (2**40, 0))", "RuntimeError", ["[pad]", OOM]),
    ("ember.histc(ember.ones(4), bins=2**40)", "RuntimeError", ["[histc]", OOM]),
]

# Results that must come out without allocating the huge sizes.
OK_CASES = [
    ("tuple(F.adaptive_max_pool2d(ember.zeros(0, 2, 1, 5), 2**40, True)[0].shape)",
     [0, 2, K40, K40]),
    ("tuple(ember.empty(0, 2**40, 2**40).shape)", [0, K40, K40]),
    ("tuple(F.max_pool1d(x[0], 2**62, 2**62, 2**61).shape)", [2, 1, 1]),
]

CHILD = textwrap.dedent("""
    import json, resource, sys
    import ember
    import ember.nn.functional as F

    def vm_size():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * 4096

    limit = vm_size() + (4 << 30)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard == resource.RLIM_INFINITY or hard >= limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    x = ember.randn(5, 2, 1, 5)
    out = {}
    for expr in json.loads(sys.argv[1]):
        try:
            r = eval(expr)
            out[expr] = ["ok", r if isinstance(r, (list, tuple, int)) else None]
        except BaseException as e:
            out[expr] = [type(e).__name__, str(e)]
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def results():
    exprs = [c[0] for c in CASES] + [c[0] for c in OK_CASES]
    env = dict(os.environ, OMP_NUM_THREADS="2", EMBER_NUM_THREADS="2")
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(exprs)], capture_output=True,
                          text=True, timeout=300, env=env)
    assert proc.returncode == 0, f"child died (rc {proc.returncode}): {proc.stderr[-2000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("expr,etype,fragments", CASES, ids=[c[0] for c in CASES])
def test_impossible_size_raises(results, expr, etype, fragments):
    got_type, msg = results[expr]
    assert got_type == etype, f"{expr}: {got_type}: {msg}"
    for frag in fragments:
        assert frag in msg, f"{expr}: {msg!r} lacks {frag!r}"


@pytest.mark.parametrize("expr,want", OK_CASES, ids=[c[0] for c in OK_CASES])
def test_huge_but_empty_or_small_results(results, expr, want):
    got_type, value = results[expr]
    assert got_type == "ok", f"{expr}: {got_type}: {value}"
    assert list(value) == want
