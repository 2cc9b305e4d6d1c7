"""The op call path (Note [Call path]): every op has an identity and enters through one path.

- Every conformance sample (PyTorch 1.13's op_db, float32, through the ember_ops.py mapping) runs
  under the profiler with the Coverage layer on: each call shows op events, and no tensor is
  created outside an op (a tensor made outside every op scope means an op function has no entry:
  a primitive missing from the op list).
- The same samples run on a device type with no kernels and inaccessible memory: each op raises
  NotImplementedError "[op] not implemented for nokernel_test <dtype>" or, for ops that only
  make views, returns without reading memory (a read would fault and kill the child process).
- The op list itself: unique ids, parseable schemas, traits that agree with each other.
"""

import os
import subprocess
import sys
import textwrap

import pytest

import ember

torch = pytest.importorskip("torch")

HERE = os.path.dirname(os.path.abspath(__file__))
CONFORMANCE = os.path.join(os.path.dirname(HERE), "conformance")


def op_list():
    return ember._C._call_path.op_list()


def test_op_ids_are_unique_and_schemas_parse():
    ops = op_list()
    ids = [o[0] for o in ops]
    assert len(ids) == len(set(ids))
    assert len(ops) > 600
    traits = ember._C._call_path.TRAITS
    for op_id, name, overload, args, returns, bits, qualified in ops:
        assert name and qualified == "aten::" + name, op_id
        assert returns, op_id
        for typ, arg, default in args:
            assert typ and arg, (op_id, args)
        # a composite has no rules of its own; only primitives carry vjp/jvp
        if bits & traits["composite"]:
            assert not bits & (traits["vjp"] | traits["jvp"]), op_id
        if bits & traits["jvp"] and not bits & traits["elementwise"]:
            assert bits & traits["vjp"], op_id


def test_op_list_names_known_ops():
    by_id = {o[0]: o for o in op_list()}
    for op_id in ("mm", "sum", "conv2d", "max_pool2d", "nonzero", "sort", "layer_norm",
                  "index_select", "cat", "linalg_solve", "embedding", "dropout", "randn"):
        assert op_id in by_id, op_id
    traits = ember._C._call_path.TRAITS
    assert by_id["nonzero"][5] & traits["dynamic_shape"]
    assert by_id["transpose"][5] & traits["view"]
    assert by_id["randn"][5] & traits["random"]
    assert by_id["mm"][5] & traits["autocast_lower"]
    mm = by_id["mm"]
    assert [a[0] for a in mm[3]] == ["Tensor", "Tensor"]


def test_trace_sees_nested_ops():
    x = ember.randn(3, 4)
    names, uncovered, result, error = ember._C._call_path.trace(lambda: (x @ x.t()).relu().sum())
    assert error is None and uncovered == 0
    for n in ("aten::mm", "aten::relu", "aten::sum"):
        assert n in names, names
    # the Coverage layer notices a tensor made outside every op (here: none is)
    names, uncovered, result, error = ember._C._call_path.trace(lambda: 1 + 1)
    assert names == [] and uncovered == 0


def _conformance_samples_script(mode):
    """A child program that runs every float32 conformance sample in `mode` ("trace" or
    "nokernel") and prints one line per problem, then DONE."""
    return textwrap.dedent(f"""
        import sys, zlib, functools, warnings
        sys.path.insert(0, {CONFORMANCE!r})
        warnings.simplefilter("ignore")
        import torch, ember
        import run, ember_ops
        from backends import make_backend, default_call
        op_db, only_cuda = run.load_op_db()
        backend = make_backend("ember")
        mode = {mode!r}
        if mode == "nokernel":
            dev = ember._C._call_path.register_nokernel_device()
        n_samples = n_ops = 0

        def on_device(x):
            # a 0-dim integer tensor stays on the CPU: it stands for a number (narrow's start),
            # as CPU scalars mix with device tensors in PyTorch
            if isinstance(x, ember.Tensor) and x.dim() == 0 and not x.is_floating_point():
                return x
            if isinstance(x, ember.Tensor):
                return ember.empty_strided(tuple(x.shape), tuple(x.stride()), dtype=x.dtype,
                                           device=dev)
            if isinstance(x, (list, tuple)):
                return type(x)(on_device(v) for v in x)
            if isinstance(x, dict):
                return {{k: on_device(v) for k, v in x.items()}}
            return x

        for op in op_db:
            if torch.float32 not in run.cpu_dtypes(op, only_cuda):
                continue
            entry = ember_ops.lookup(op.name, op.variant_test_name)
            if entry.unmapped:
                continue
            spec = entry.call if entry.call is not None else default_call(op)
            fn = backend.resolve(spec) if spec else None
            if fn is None:
                continue
            if entry.adapt is not None:
                fn = functools.partial(entry.adapt, fn)
            try:
                torch.manual_seed(zlib.crc32(run.op_key(op).encode()))
                samples = list(op.sample_inputs("cpu", torch.float32, requires_grad=False))
            except Exception:
                continue
            n_ops += 1
            key = run.op_key(op)
            for i, s in enumerate(samples):
                try:
                    a = backend.convert(s.input)
                    args = backend.convert(s.args)
                    kw = backend.convert(s.kwargs)
                except Exception:
                    continue
                if mode == "nokernel":
                    if not any(isinstance(v, ember.Tensor) for v in
                               [a] + list(args) + list(kw.values())):
                        continue
                    try:  # bad input is not about kernels: skip calls that fail on CPU too
                        fn(a, *args, **kw)
                    except Exception:
                        continue
                    a, args, kw = on_device(a), on_device(args), on_device(kw)
                n_samples += 1
                print("RUN", key, i, flush=True)
                names, uncovered, result, error = ember._C._call_path.trace(
                    lambda: fn(a, *args, **kw))
                if mode == "trace":
                    if uncovered:
                        print("PROBLEM", key, i, f"{{uncovered}} tensor(s) made outside any op")
                    elif error is None and not names:
                        # a call that made a new tensor must show an op; one that hands back
                        # an input unchanged (x.contiguous() of a contiguous x) ran none
                        outs = result if isinstance(result, (list, tuple)) else [result]
                        ins = [a] + list(args) + list(kw.values())
                        def same(r, x):
                            return isinstance(x, ember.Tensor) and (r is x or (
                                r.data_ptr() == x.data_ptr() and r.shape == x.shape and
                                r.stride() == x.stride() and r.dtype == x.dtype))
                        new = [r for r in outs if isinstance(r, ember.Tensor) and
                               not any(same(r, x) for x in ins)]
                        if new:
                            print("PROBLEM", key, i, "no op event for a call that made tensors")
                else:
                    if error is None:
                        continue  # views and metadata: it returned without touching memory
                    msg = str(error)
                    # the typed error, or an argument PyTorch also wants on the CPU (the
                    # sections tensor of tensor_split): moving every tensor is then wrong input
                    if not (isinstance(error, NotImplementedError) and
                            "not implemented for nokernel_test" in msg) and \
                            "must be on the CPU" not in msg:
                        print("PROBLEM", key, i, type(error).__name__, msg.splitlines()[0][:200])
        print("DONE", n_ops, n_samples, flush=True)
    """)


def _run_child(mode):
    env = dict(os.environ, OMP_NUM_THREADS="1", EMBER_NUM_THREADS="1")
    p = subprocess.run([sys.executable, "-c", _conformance_samples_script(mode)],
                       capture_output=True, text=True, env=env, timeout=1500)
    lines = p.stdout.splitlines()
    done = [ln for ln in lines if ln.startswith("DONE")]
    last_run = [ln for ln in lines if ln.startswith("RUN")][-1:] or ["(none)"]
    assert done, (f"the child died (rc {p.returncode}) while running {last_run[0]}:\n"
                  f"{p.stderr[-3000:]}")
    _, n_ops, n_samples = done[0].split()
    assert int(n_ops) > 400 and int(n_samples) > 3000, done
    return [ln for ln in lines if ln.startswith("PROBLEM")]


def test_every_conformance_sample_goes_through_the_call_path():
    problems = _run_child("trace")
    assert not problems, "\n".join(problems[:60]) + f"\n({len(problems)} problems)"


def test_no_kernel_device_raises_the_typed_error_and_touches_no_memory():
    problems = _run_child("nokernel")
    assert not problems, "\n".join(problems[:60]) + f"\n({len(problems)} problems)"


def test_no_kernel_device_direct():
    dev = ember._C._call_path.register_nokernel_device()
    x = ember.empty(2, 3, device=dev)
    assert x.device.type == dev and x.shape == (2, 3)
    # views need no kernel
    assert x.t().shape == (3, 2) and x[0].shape == (3,)
    for fn in (lambda: x + x, lambda: x.sum(), lambda: x @ x.t(), lambda: x.sort(),
               lambda: ember.nn.functional.layer_norm(x, (3,)), lambda: x.clone(),
               lambda: x.exp_(), lambda: ember.cat([x, x])):
        with pytest.raises(NotImplementedError, match="not implemented for nokernel_test float"):
            fn()
