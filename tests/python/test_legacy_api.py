"""Legacy tensor types, device predicates, ember.backends, ember.onnx, nn.parallel and
ember.distributed's availability, against torch 1.13's behaviour."""

import pytest
import torch

import ember

LEGACY = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
          "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_constructors_match_torch(name):
    e, t = getattr(ember, name), getattr(torch, name)
    assert str(e(2, 3).dtype).split(".")[1] == str(t(2, 3).dtype).split(".")[1]
    assert list(e(2, 3).shape) == [2, 3]
    assert list(e().shape) == list(t().shape) == [0]
    assert list(e(ember.Size([4, 1])).shape) == [4, 1]
    data = [[1, 0], [0, 1]]
    assert e(data).tolist() == t(data).tolist()
    # isinstance is true for tensors of exactly that dtype.
    assert isinstance(e(data), e)
    assert isinstance(t(data), t)
    other = "LongTensor" if name != "LongTensor" else "FloatTensor"
    assert not isinstance(e(data), getattr(ember, other))
    assert e(data).type() == t(data).type().replace("torch.", "ember.")


def test_legacy_constructor_errors():
    with pytest.raises(TypeError):
        torch.FloatTensor(3.0)
    with pytest.raises(TypeError):
        ember.FloatTensor(3.0)
    with pytest.raises(TypeError):
        torch.FloatTensor(torch.tensor([1, 2]))
    with pytest.raises(TypeError):
        ember.FloatTensor(ember.tensor([1, 2]))
    with pytest.raises(TypeError):
        ember.FloatTensor([1, 2], [3])
    x = ember.tensor([1.0, 2.0])
    assert ember.FloatTensor(x) is x  # same dtype: the tensor itself, as torch
    assert not issubclass(ember.FloatTensor, ember.Tensor)


def test_tensor_type_conversions():
    x = ember.tensor([1.5, -2.0])
    assert x.type(ember.DoubleTensor).dtype == ember.float64
    assert x.type("torch.IntTensor").tolist() == torch.tensor([1.5, -2.0]).type(
        "torch.IntTensor").tolist()
    assert x.type("ember.LongTensor").dtype == ember.int64
    assert x.type(ember.int16).dtype == ember.int16
    with pytest.raises(ValueError):
        x.type("torch.Foo")
    with pytest.raises(ValueError):
        torch.tensor([1.0]).type("torch.Foo")


def test_set_default_tensor_type():
    try:
        ember.set_default_tensor_type(ember.DoubleTensor)
        assert ember.ones(1).dtype == ember.float64
        ember.set_default_tensor_type("torch.FloatTensor")
        assert ember.ones(1).dtype == ember.float32
        with pytest.raises(TypeError):
            ember.set_default_tensor_type(ember.LongTensor)
        with pytest.raises(TypeError):
            torch.set_default_tensor_type(torch.LongTensor)
    finally:
        ember.set_default_dtype(ember.float32)


def test_cuda_legacy_types_without_device():
    assert hasattr(ember.cuda, "FloatTensor")
    assert not isinstance(ember.ones(1), ember.cuda.FloatTensor)
    if not ember.cuda.is_available():
        with pytest.raises(RuntimeError):
            ember.cuda.FloatTensor(2)


@pytest.mark.parametrize("pred", ["is_xpu", "is_mps", "is_mkldnn", "is_vulkan", "is_ipu",
                                  "is_nested", "is_cuda", "is_sparse", "is_quantized", "is_meta"])
def test_device_predicates(pred):
    assert getattr(ember.ones(2), pred) is getattr(torch.ones(2), pred) is False
    assert ember.ones(2).is_cpu is True


def test_backends_report_the_build():
    b = ember.backends
    assert b.mps.is_available() is False and b.mps.is_built() is False
    assert b.cudnn.is_available() is False and b.cudnn.version() is None
    assert b.openmp.is_available() is True
    assert b.mkldnn.is_available() is True
    assert b.mkl.is_available() is False
    assert b.cpu.get_cpu_capability() == ember._C._cpu_capability.upper()
    assert b.cuda.matmul.allow_tf32 is torch.backends.cuda.matmul.allow_tf32
    # Flags are settable, and flags() restores them.
    old = b.cudnn.benchmark
    with b.cudnn.flags(enabled=True, benchmark=True, deterministic=True):
        assert b.cudnn.benchmark is True and b.cudnn.deterministic is True
    assert b.cudnn.benchmark is old
    b.cudnn.deterministic = True
    assert ember.backends.cudnn.deterministic is True
    b.cudnn.deterministic = False
    import ember.backends.cudnn as cudnn  # torch.backends.cudnn is importable as a module
    assert cudnn is b.cudnn


def test_onnx_imports_and_export_says_why():
    import ember.onnx as onnx
    assert onnx.is_in_onnx_export() is False
    with pytest.raises(NotImplementedError, match="graph capture"):
        onnx.export(ember.nn.Linear(2, 2), (ember.ones(1, 2),), "model.onnx")


def test_data_parallel_runs_the_module_on_cpu():
    ember.manual_seed(0)
    lin = ember.nn.Linear(3, 2)
    dp = ember.nn.DataParallel(lin)
    x = ember.randn(4, 3)
    assert ember.equal(dp(x), lin(x))
    assert list(dp.state_dict()) == ["module.weight", "module.bias"]
    tdp = torch.nn.DataParallel(torch.nn.Linear(3, 2))
    assert list(tdp.state_dict()) == list(dp.state_dict())
    assert ember.equal(ember.nn.parallel.data_parallel(lin, x), lin(x))
    with pytest.raises(TypeError):
        ember.nn.DataParallel(lambda x: x)


def test_distributed_data_parallel_needs_a_process_group():
    assert ember.distributed.is_available() is True
    assert ember.distributed.is_initialized() is False
    # torch's error when no process group was initialised.
    with pytest.raises(RuntimeError, match="Default process group has not been initialized"):
        ember.nn.parallel.DistributedDataParallel(ember.nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match="Default process group has not been initialized"):
        torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))


@pytest.mark.parametrize("dtype", ["uint8", "int16", "int32", "float32", "float64", "bfloat16"])
def test_frombuffer_matches_torch_and_shares_memory(dtype):
    buf_t = bytearray(range(48))
    buf_e = bytearray(range(48))
    t = torch.frombuffer(buf_t, dtype=getattr(torch, dtype), offset=8)
    e = ember.frombuffer(buf_e, dtype=getattr(ember, dtype), offset=8)
    assert e.view(ember.uint8).tolist() == t.view(torch.uint8).tolist()
    assert e.dtype == getattr(ember, dtype) and e.dim() == 1
    e.view(ember.uint8)[0] = 200  # writes through to the buffer
    assert buf_e[8] == 200
    t2 = torch.frombuffer(buf_t, dtype=torch.uint8, count=3, offset=5)
    e2 = ember.frombuffer(buf_e, dtype=ember.uint8, count=3, offset=5)
    assert e2.tolist() == t2.tolist()


@pytest.mark.parametrize("kwargs", [dict(dtype="int32"), dict(dtype="int16", count=5),
                                    dict(dtype="int16", offset=7), dict(dtype="int16", count=0)])
def test_frombuffer_errors_are_value_errors(kwargs):
    kwargs = dict(kwargs)
    name = kwargs.pop("dtype")
    with pytest.raises(ValueError):
        torch.frombuffer(bytearray(6), dtype=getattr(torch, name), **kwargs)
    with pytest.raises(ValueError):
        ember.frombuffer(bytearray(6), dtype=getattr(ember, name), **kwargs)
    with pytest.raises(ValueError):
        ember.frombuffer([1, 2], dtype=ember.uint8)
    with pytest.raises(ValueError):
        ember.frombuffer(bytearray(), dtype=ember.uint8)
