"""ember.cuda against torch.cuda.

Without a GPU (this machine): torch 1.13 here is a CPU-only build, so where it returns a value
(is_available() False, device_count() 0, the memory statistics 0 or empty, seeding None, ...)
ember returns the same value; where it raises (AssertionError "Torch not compiled with CUDA",
or TypeError/RuntimeError from its dummy classes), ember raises RuntimeError, which is what a
CUDA build of PyTorch raises on a machine without a GPU. Tensor.pin_memory() raises a
RuntimeError in both (torch's NotImplementedError is one).

With a GPU: streams, events, the allocator's statistics, CUDA Graphs and make_graphed_callables
against eager execution of the same work.
"""

import collections
import warnings

import pytest
import torch

import ember
from ember.utils.data import _utils as data_utils

HAS_GPU = ember.cuda.is_available()
gpu = pytest.mark.skipif(not HAS_GPU, reason="no CUDA device")
no_gpu = pytest.mark.skipif(HAS_GPU, reason="checks the behaviour without a GPU")


def outcome(f):
    """('ok', value, warning categories) or ('raise', exception type, [])."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            value = f()
        except Exception as e:  # noqa: BLE001
            return "raise", type(e), []
    return "ok", value, [x.category for x in w]


# ---- without a GPU: the functions torch returns from ----

RETURNING = [
    ("is_available", lambda m: m.cuda.is_available()),
    ("device_count", lambda m: m.cuda.device_count()),
    ("set_device(-1)", lambda m: m.cuda.set_device(-1)),
    ("device(-1)", lambda m: m.cuda.device(-1).__enter__()),
    ("device_of(cpu tensor)", lambda m: m.cuda.device_of(m.ones(2)).__enter__()),
    ("set_stream(None)", lambda m: m.cuda.set_stream(None)),
    ("stream(None)", lambda m: m.cuda.stream(None).__enter__()),
    ("StreamContext(None)", lambda m: m.cuda.StreamContext(None).__enter__()),
    ("memory_allocated", lambda m: m.cuda.memory_allocated()),
    ("max_memory_allocated", lambda m: m.cuda.max_memory_allocated()),
    ("memory_reserved", lambda m: m.cuda.memory_reserved()),
    ("max_memory_reserved", lambda m: m.cuda.max_memory_reserved()),
    ("memory_cached", lambda m: m.cuda.memory_cached()),
    ("max_memory_cached", lambda m: m.cuda.max_memory_cached()),
    ("memory_allocated(0)", lambda m: m.cuda.memory_allocated(0)),
    ("empty_cache", lambda m: m.cuda.empty_cache()),
    ("memory_stats", lambda m: m.cuda.memory_stats()),
    ("manual_seed", lambda m: m.cuda.manual_seed(1)),
    ("manual_seed_all", lambda m: m.cuda.manual_seed_all(1)),
    ("seed", lambda m: m.cuda.seed()),
    ("seed_all", lambda m: m.cuda.seed_all()),
    ("get_rng_state_all", lambda m: m.cuda.get_rng_state_all()),
    ("set_rng_state", lambda m: m.cuda.set_rng_state(m.zeros(16, dtype=m.uint8))),
    ("set_rng_state_all", lambda m: m.cuda.set_rng_state_all([])),
    ("is_initialized", lambda m: m.cuda.is_initialized()),
    ("get_arch_list", lambda m: m.cuda.get_arch_list()),
    ("is_pinned", lambda m: m.ones(2).is_pinned()),
    ("is_pinned of a view", lambda m: m.ones(4, 4).t().is_pinned()),
]


@no_gpu
@pytest.mark.parametrize("name,f", RETURNING, ids=[n for n, _ in RETURNING])
def test_no_gpu_same_value_as_torch(name, f):
    theirs, ours = outcome(lambda: f(torch)), outcome(lambda: f(ember))
    assert theirs[0] == "ok", theirs
    assert ours == theirs


def test_memory_stats_is_an_ordered_dict():
    assert isinstance(ember.cuda.memory_stats(), collections.OrderedDict)
    if not HAS_GPU:
        assert ember.cuda.memory_stats() == torch.cuda.memory_stats() == {}


@no_gpu
def test_deprecated_names_warn_future_warning():
    with pytest.warns(FutureWarning, match="memory_reserved"):
        assert ember.cuda.memory_cached() == 0
    with pytest.warns(FutureWarning, match="max_memory_reserved"):
        assert ember.cuda.max_memory_cached() == 0


# ---- without a GPU: the functions torch raises from ----

RAISING = [
    ("current_device", lambda m: m.cuda.current_device()),
    ("set_device(0)", lambda m: m.cuda.set_device(0)),
    ("device(0)", lambda m: m.cuda.device(0).__enter__()),
    ("device(None)", lambda m: m.cuda.device(None).__enter__()),
    ("synchronize", lambda m: m.cuda.synchronize()),
    ("get_device_name", lambda m: m.cuda.get_device_name()),
    ("get_device_name(0)", lambda m: m.cuda.get_device_name(0)),
    ("get_device_properties(0)", lambda m: m.cuda.get_device_properties(0)),
    ("get_device_capability", lambda m: m.cuda.get_device_capability()),
    ("is_bf16_supported", lambda m: m.cuda.is_bf16_supported()),
    ("mem_get_info", lambda m: m.cuda.mem_get_info()),
    ("Stream()", lambda m: m.cuda.Stream()),
    ("Stream(priority=-1)", lambda m: m.cuda.Stream(priority=-1)),
    ("Event()", lambda m: m.cuda.Event()),
    ("Event(enable_timing)", lambda m: m.cuda.Event(enable_timing=True)),
    ("current_stream", lambda m: m.cuda.current_stream()),
    ("default_stream", lambda m: m.cuda.default_stream()),
    ("reset_peak_memory_stats", lambda m: m.cuda.reset_peak_memory_stats()),
    ("reset_max_memory_allocated", lambda m: m.cuda.reset_max_memory_allocated()),
    ("reset_max_memory_cached", lambda m: m.cuda.reset_max_memory_cached()),
    ("memory_summary", lambda m: m.cuda.memory_summary()),
    ("set_per_process_memory_fraction", lambda m: m.cuda.set_per_process_memory_fraction(0.5)),
    ("initial_seed", lambda m: m.cuda.initial_seed()),
    ("get_rng_state", lambda m: m.cuda.get_rng_state()),
    ("CUDAGraph", lambda m: m.cuda.CUDAGraph()),
    ("graph", lambda m: m.cuda.graph(None)),
    ("graph_pool_handle", lambda m: m.cuda.graph_pool_handle()),
    ("is_current_stream_capturing", lambda m: m.cuda.is_current_stream_capturing()),
    ("init", lambda m: m.cuda.init()),
    ("make_graphed_callables",
     lambda m: m.cuda.make_graphed_callables(m.nn.Linear(2, 2), (m.ones(2, 2),))),
    ("Tensor.pin_memory", lambda m: m.ones(2).pin_memory()),
    ("Tensor.pin_memory of a view", lambda m: m.ones(3, 4)[:, 1].pin_memory()),
    ("Tensor.pin_memory 0-dim", lambda m: m.tensor(1.5).pin_memory()),
    ("Tensor.pin_memory empty", lambda m: m.ones(0, 3).pin_memory()),
    ("ones(device='cuda')", lambda m: m.ones(2, device="cuda")),
    ("Tensor.cuda()", lambda m: m.ones(2).cuda()),
]


@no_gpu
@pytest.mark.parametrize("name,f", RAISING, ids=[n for n, _ in RAISING])
def test_no_gpu_raises_runtime_error_where_torch_raises(name, f):
    theirs, ours = outcome(lambda: f(torch)), outcome(lambda: f(ember))
    assert theirs[0] == "raise", theirs
    assert ours[0] == "raise" and issubclass(ours[1], RuntimeError), (name, ours)


@no_gpu
def test_no_gpu_error_message_says_what_and_why():
    with pytest.raises(RuntimeError, match=r"\[cuda\.current_device\] no CUDA GPU is available"):
        ember.cuda.current_device()
    with pytest.raises(RuntimeError, match="no CUDA GPU"):
        ember.ones(2).pin_memory()
    # pin_memory raises a RuntimeError in torch 1.13 too (NotImplementedError is one).
    with pytest.raises(RuntimeError):
        torch.ones(2).pin_memory()


def test_device_argument_parsing():
    # A CPU device is a ValueError in both, with or without a GPU.
    for m in (torch, ember):
        with pytest.raises(ValueError, match="Expected a cuda device"):
            m.cuda.set_device("cpu")
        with pytest.raises(ValueError, match="Expected a cuda device"):
            m.cuda.set_device(m.device("cpu"))
    with pytest.raises(TypeError):
        ember.cuda.set_device(1.5)


def test_record_stream_needs_a_stream():
    with pytest.raises((TypeError, RuntimeError)):
        torch.ones(2).record_stream(None)
    with pytest.raises(TypeError, match="ember.cuda.Stream"):
        ember.ones(2).record_stream(None)


def test_tensor_methods_installed():
    for name in ("pin_memory", "is_pinned", "record_stream"):
        assert callable(getattr(ember.Tensor, name))
    assert ember.ones(2).is_pinned() is False


def test_nvtx_noops():
    assert ember.cuda.nvtx.range_push("a") == 0
    assert ember.cuda.nvtx.range_push("b") == 1
    assert ember.cuda.nvtx.range_pop() == 1
    assert ember.cuda.nvtx.range_pop() == 0
    assert ember.cuda.nvtx.range_pop() == -1
    ember.cuda.nvtx.mark("x")
    with ember.cuda.nvtx.range("step {}", 3):
        pass


def test_default_generators_tuple():
    assert len(ember.cuda.default_generators) == ember.cuda.device_count()


# ---- DataLoader(pin_memory=True) ----

Point = collections.namedtuple("Point", "x y")


class _Pinnable:
    def __init__(self):
        self.pinned = False

    def pin_memory(self):
        self.pinned = True
        return self


def _structures(m):
    t = m.arange(6.0).reshape(2, 3)
    return [t, t.t(), m.tensor(2.0), m.ones(0, 2), (t, 1), [t, "s"], {"a": t, "b": (t, t)},
            Point(t, 3), "text", b"bytes", 7, [Point(t, [t, {"k": t}])]]


def _shape(v):
    """The structure of a pinned batch: containers by type, tensors as ('T', values)."""
    if isinstance(v, (torch.Tensor, ember.Tensor)):
        return ("T", v.tolist(), tuple(v.shape), getattr(v, "_marked", False))
    if isinstance(v, dict):
        return (type(v).__name__, {k: _shape(x) for k, x in v.items()})
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [_shape(x) for x in v])
    return v


@pytest.fixture
def fake_pinning(monkeypatch):
    """Tensor.pin_memory as a marked copy, on both libraries, with CUDA 'available' to the
    loader: what the pinning path does with a batch's structure runs without a GPU."""
    def mark(m):
        def pin(self, device=None):
            out = self.clone()
            out._marked = True
            return out
        return pin
    monkeypatch.setattr(torch.Tensor, "pin_memory", mark(torch))
    monkeypatch.setattr(ember.Tensor, "pin_memory", mark(ember))
    monkeypatch.setattr(ember.cuda, "is_available", lambda: True)


@pytest.mark.parametrize("i", range(12))
def test_pin_memory_structure_matches_torch(fake_pinning, i):
    from torch.utils.data._utils.pin_memory import pin_memory as torch_pin
    ours = data_utils.pin_memory(_structures(ember)[i])
    theirs = torch_pin(_structures(torch)[i])
    assert _shape(ours) == _shape(theirs)


def test_pin_memory_calls_custom_pin_memory(fake_pinning):
    obj = _Pinnable()
    assert data_utils.pin_memory([obj])[0].pinned


@pytest.mark.parametrize("workers,context", [(0, None), (2, "thread"), (2, "fork")])
def test_dataloader_pins_every_batch(fake_pinning, workers, context):
    x = ember.arange(20.0).reshape(10, 2)
    y = ember.arange(10)
    ds = ember.utils.data.TensorDataset(x, y)
    dl = ember.utils.data.DataLoader(ds, batch_size=4, pin_memory=True, num_workers=workers,
                                     multiprocessing_context=context)
    batches = list(dl)
    assert len(batches) == 3
    for k, (xb, yb) in enumerate(batches):
        assert isinstance(batches[k], list)  # a pinned tuple comes back as a list, as torch
        assert getattr(xb, "_marked", False) and getattr(yb, "_marked", False)
        assert xb.tolist() == x[4 * k:4 * k + 4].tolist()
        assert yb.tolist() == y[4 * k:4 * k + 4].tolist()
    assert len(iter(dl)) == 3


@no_gpu
@pytest.mark.parametrize("workers", [0, 2])
def test_dataloader_pin_memory_without_gpu_warns_and_returns_batches(workers):
    data = [(float(i), {"v": [i, i + 1]}) for i in range(7)]
    with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no "
                                         "accelerator is found"):
        dl = ember.utils.data.DataLoader(data, batch_size=3, pin_memory=True,
                                         num_workers=workers)
    ref = torch.utils.data.DataLoader(data, batch_size=3, pin_memory=True, num_workers=workers)
    ours, theirs = list(dl), list(ref)
    assert len(ours) == len(theirs) == 3
    for a, b in zip(ours, theirs):
        assert a[0].tolist() == b[0].tolist() and a[0].dtype == ember.float64
        assert [t.tolist() for t in a[1]["v"]] == [t.tolist() for t in b[1]["v"]]


def test_dataloader_without_pin_memory_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        list(ember.utils.data.DataLoader(list(range(4)), batch_size=2))


# ---- with a GPU ----

@gpu
def test_devices_and_properties():
    n = ember.cuda.device_count()
    assert n >= 1 and 0 <= ember.cuda.current_device() < n
    p = ember.cuda.get_device_properties(0)
    assert p.total_memory > 0 and p.multi_processor_count > 0 and p.major >= 7
    assert ember.cuda.get_device_name(0) == p.name
    assert ember.cuda.get_device_capability(0) == (p.major, p.minor)
    assert repr(p).startswith("_CudaDeviceProperties(name='")
    free, total = ember.cuda.mem_get_info()
    assert 0 < free <= total == p.total_memory
    with pytest.raises(AssertionError):
        ember.cuda.get_device_properties(n)
    with pytest.raises(IndexError):
        ember.cuda.set_device(n)
    with ember.cuda.device(0):
        assert ember.cuda.current_device() == 0
    x = ember.ones(2, device="cuda")
    with ember.cuda.device_of(x):
        assert ember.cuda.current_device() == x.get_device()


@gpu
def test_streams_and_events():
    s = ember.cuda.Stream()
    d = ember.cuda.default_stream()
    assert d.cuda_stream == 0 and s != d and s == s and hash(s) == hash(s)
    assert ember.cuda.current_stream() == d
    hi = ember.cuda.Stream(priority=-1)
    assert hi.priority <= s.priority
    a = ember.randn(1024, 1024, device="cuda")
    with ember.cuda.stream(s):
        assert ember.cuda.current_stream() == s
        b = a @ a
        e = s.record_event()
    assert ember.cuda.current_stream() == d
    d.wait_event(e)
    ref = (a.cpu().double() @ a.cpu().double()).float()
    assert ember.allclose(b.cpu(), ref, rtol=1e-3, atol=1e-2)
    s.synchronize()
    assert s.query() and e.query()
    start, end = ember.cuda.Event(enable_timing=True), ember.cuda.Event(enable_timing=True)
    start.record()
    _ = a @ a
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) > 0
    with pytest.raises(RuntimeError):
        ember.cuda.Event().elapsed_time(ember.cuda.Event())
    s2 = ember.cuda.Stream()
    s2.wait_stream(s)
    ember.cuda.synchronize()


@gpu
def test_memory_statistics_follow_allocations():
    ember.cuda.synchronize()
    ember.cuda.empty_cache()
    before = ember.cuda.memory_allocated()
    x = ember.empty(1 << 20, device="cuda")  # 4 MiB
    assert ember.cuda.memory_allocated() - before >= 4 << 20
    assert ember.cuda.memory_reserved() >= ember.cuda.memory_allocated()
    ember.cuda.reset_peak_memory_stats()
    assert ember.cuda.max_memory_allocated() == ember.cuda.memory_allocated()
    del x
    assert ember.cuda.memory_allocated() == before
    assert ember.cuda.max_memory_allocated() >= before + (4 << 20)
    stats = ember.cuda.memory_stats()
    assert stats["allocated_bytes.all.current"] == before
    assert "num_ooms" in stats
    assert isinstance(ember.cuda.memory_summary(), str)
    with pytest.raises(TypeError):
        ember.cuda.set_per_process_memory_fraction(1)
    with pytest.raises(ValueError):
        ember.cuda.set_per_process_memory_fraction(1.5)


@gpu
def test_pinned_memory_and_non_blocking_copies():
    t = ember.arange(12.0).reshape(3, 4)
    p = t.pin_memory()
    assert p.is_pinned() and not t.is_pinned()
    assert p.pin_memory() is p
    assert p.tolist() == t.tolist()
    g = p.to("cuda", non_blocking=True)
    back = ember.empty(3, 4).pin_memory()
    back.copy_(g * 2, non_blocking=True)
    ember.cuda.synchronize()
    assert back.tolist() == (t * 2).tolist()
    with pytest.raises(RuntimeError):
        g.pin_memory()
    s = ember.cuda.Stream()
    g.record_stream(s)


@gpu
def test_dataloader_pins_with_gpu():
    ds = ember.utils.data.TensorDataset(ember.arange(8.0), ember.arange(8))
    for xb, yb in ember.utils.data.DataLoader(ds, batch_size=4, pin_memory=True):
        assert xb.is_pinned() and yb.is_pinned()


@gpu
def test_rng_state_roundtrip():
    ember.cuda.manual_seed(3)
    assert ember.cuda.initial_seed() == 3
    state = ember.cuda.get_rng_state()
    a = ember.rand(100, device="cuda")
    ember.cuda.set_rng_state(state)
    b = ember.rand(100, device="cuda")
    assert ember.equal(a, b)


@gpu
def test_cuda_graph_replays_captured_work():
    static_in = ember.zeros(256, device="cuda")
    w = ember.randn(256, 256, device="cuda")
    # Warm up on a side stream (lazy cuBLAS setup happens outside the capture).
    s = ember.cuda.Stream()
    s.wait_stream(ember.cuda.current_stream())
    with ember.cuda.stream(s):
        for _ in range(2):
            _ = (w @ static_in).relu()
    ember.cuda.current_stream().wait_stream(s)
    g = ember.cuda.CUDAGraph()
    with ember.cuda.graph(g):
        assert ember.cuda.is_current_stream_capturing()
        static_out = (w @ static_in).relu()
    assert not ember.cuda.is_current_stream_capturing()
    for k in range(3):
        x = ember.randn(256, device="cuda")
        static_in.copy_(x)
        g.replay()
        ember.cuda.synchronize()
        assert ember.allclose(static_out, (w @ x).relu(), rtol=1e-4, atol=1e-4)
    g2 = ember.cuda.CUDAGraph()
    with ember.cuda.graph(g2, pool=g.pool()):
        out2 = static_out * 2
    g.replay()
    g2.replay()
    ember.cuda.synchronize()
    assert ember.allclose(out2, static_out * 2)
    g.reset()
    g2.reset()


@gpu
def test_sync_inside_capture_raises():
    g = ember.cuda.CUDAGraph()
    x = ember.ones(4, device="cuda")
    with pytest.raises(RuntimeError):
        with ember.cuda.graph(g):
            _ = x.sum().item()


@gpu
@pytest.mark.parametrize("kind", ["module", "function"])
def test_make_graphed_callables_matches_eager(kind):
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Linear(16, 32), ember.nn.ReLU(),
                                ember.nn.Linear(32, 4)).cuda()
    ref = ember.nn.Sequential(ember.nn.Linear(16, 32), ember.nn.ReLU(),
                              ember.nn.Linear(32, 4)).cuda()
    ref.load_state_dict(model.state_dict())
    sample = ember.randn(8, 16, device="cuda", requires_grad=True)
    if kind == "module":
        graphed = ember.cuda.make_graphed_callables(model, (sample,))
    else:
        w = model[0].weight

        def fn(x):
            return (x @ w.t()).tanh()

        graphed = ember.cuda.make_graphed_callables(fn, (sample,))
        ref_fn = fn
    for _ in range(3):
        x = ember.randn(8, 16, device="cuda", requires_grad=True)
        xr = x.detach().clone().requires_grad_(True)
        out = graphed(x)
        expect = ref(xr) if kind == "module" else ref_fn(xr)
        assert ember.allclose(out, expect, rtol=1e-4, atol=1e-5)
        out.square().sum().backward()
        expect.square().sum().backward()
        assert ember.allclose(x.grad, xr.grad, rtol=1e-4, atol=1e-5)
        if kind == "module":
            for p, q in zip(model.parameters(), ref.parameters()):
                assert ember.allclose(p.grad, q.grad, rtol=1e-4, atol=1e-5)
                p.grad = None
                q.grad = None
    if kind == "module":
        model.eval()  # the other mode runs the eager forward
        x = ember.randn(8, 16, device="cuda")
        assert ember.allclose(model(x), ref(x), rtol=1e-4, atol=1e-5)
