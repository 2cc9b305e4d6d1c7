"""ember.save / ember.load (safetensors): round trips of every dtype and layout, nested
structures, and interoperability with an independent safetensors reader/writer written here
from the spec with struct + json (the oracle: torch 1.13 tensors decoded from the bytes)."""

import collections
import io
import json
import os
import struct
import threading

import numpy as np
import pytest
import torch

import ember
from ember import serialization as S

DTYPES = {  # ember dtype name -> (safetensors name, torch dtype)
    "bool": ("BOOL", torch.bool), "uint8": ("U8", torch.uint8), "int8": ("I8", torch.int8),
    "int16": ("I16", torch.int16), "int32": ("I32", torch.int32),
    "int64": ("I64", torch.int64), "float16": ("F16", torch.float16),
    "bfloat16": ("BF16", torch.bfloat16), "float32": ("F32", torch.float32),
    "float64": ("F64", torch.float64), "complex64": ("C64", torch.complex64),
    "complex128": ("C128", torch.complex128),
}
TORCH_BY_ST = {st: td for st, td in DTYPES.values()}
ST_BY_TORCH = {td: st for st, td in DTYPES.values()}


def ref_read(path):
    """An independent safetensors reader (the spec, with struct + json)."""
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    meta = header.pop("__metadata__", {})
    out = {}
    for name, info in header.items():
        b, e = info["data_offsets"]
        dt = TORCH_BY_ST[info["dtype"]]
        buf = bytearray(data[b:e])
        t = torch.frombuffer(buf, dtype=dt) if len(buf) else torch.empty(0, dtype=dt)
        out[name] = t.reshape(info["shape"])
    return out, meta, n, header


def ref_write(path, tensors, metadata=None, pad=True, order=None):
    """An independent writer: tensors (torch) laid out in `order`, header keys in dict order."""
    header, blobs, offset = {}, [], 0
    if metadata is not None:
        header["__metadata__"] = metadata
    layout = order or list(tensors)
    offsets = {}
    for name in layout:
        b = tensors[name].contiguous().numpy().tobytes() if tensors[name].dtype != torch.bfloat16 \
            else tensors[name].contiguous().view(torch.int16).numpy().tobytes()
        offsets[name] = (offset, offset + len(b))
        blobs.append(b)
        offset += len(b)
    for name, t in tensors.items():
        header[name] = {"dtype": ST_BY_TORCH[t.dtype], "shape": list(t.shape),
                        "data_offsets": list(offsets[name])}
    js = json.dumps(header).encode()
    if pad:
        js += b" " * ((8 - len(js) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(js)) + js + b"".join(blobs))


def to_np(t):
    if t.dtype == ember.bfloat16:
        return t.to(ember.float32).numpy()
    return t.numpy()


def torch_np(t):
    return t.to(torch.float32).numpy() if t.dtype == torch.bfloat16 else t.numpy()


def sample(name):
    base = ember.arange(24, dtype=ember.float64).sub(11).div(4).view(2, 3, 4)
    return base.to(getattr(ember, name))


@pytest.mark.parametrize("name", list(DTYPES))
def test_round_trip_and_reference_reader(tmp_path, name):
    x = sample(name)
    objs = {"contig": x, "strided": x.transpose(0, 2), "sliced": x[:, ::2, 1:],
            "zero": x[:, :0], "scalar": x[1, 2, 3]}
    p = tmp_path / "f.safetensors"
    ember.save(objs, str(p))
    back = ember.load(str(p))
    assert list(back) == list(objs)
    for k, v in objs.items():
        assert back[k].dtype == v.dtype and tuple(back[k].shape) == tuple(v.shape)
        np.testing.assert_array_equal(to_np(back[k]), to_np(v.contiguous()))
    # The file is plain safetensors: an independent reader gets the same tensors.
    ref, meta, n, header = ref_read(p)
    assert (8 + n) % 8 == 0
    assert list(ref) == list(objs)
    for k, v in objs.items():
        assert ref[k].dtype == DTYPES[name][1]
        np.testing.assert_array_equal(torch_np(ref[k]), to_np(v.contiguous()))
    offs = sorted(h["data_offsets"] for h in header.values())
    assert offs[0][0] == 0 and all(a[1] == b[0] for a, b in zip(offs, offs[1:]))
    assert "ember.structure" in meta


@pytest.mark.parametrize("pad", [True, False])
def test_reads_reference_writer(tmp_path, pad):
    g = torch.Generator().manual_seed(0)
    tensors = {"b": torch.randn(3, 2, generator=g, dtype=torch.float64),
               "a": torch.randint(-5, 5, (4,), generator=g, dtype=torch.int32),
               "h": torch.randn(5, generator=g).to(torch.bfloat16),
               "é\u2603": torch.zeros(0, 3, dtype=torch.uint8),
               "s": torch.tensor(2.5, dtype=torch.float16)}
    p = tmp_path / "ref.safetensors"
    ref_write(p, tensors, {"format": "pt", "k": "v \" \\"}, pad=pad,
              order=["h", "s", "a", "é\u2603", "b"])
    back = ember.load(str(p))  # no ember structure: a dict name -> tensor, in header order
    assert list(back) == list(tensors)
    for k, t in tensors.items():
        assert str(back[k].dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_array_equal(to_np(back[k]), torch_np(t))
    assert S.safetensors_metadata(str(p)) == {"format": "pt", "k": "v \" \\"}


def test_nested_structures_and_sharing(tmp_path):
    w = ember.randn(4, 3)
    opt_state = {"state": {0: {"step": ember.tensor(3.0), "exp_avg": ember.ones(4, 3)},
                           1: {"step": ember.tensor(3.0), "exp_avg": ember.zeros(3)}},
                 "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8,
                                   "amsgrad": False, "params": [0, 1], "name": None,
                                   "max": float("inf"), "nan": float("nan")}]}
    obj = {"model": collections.OrderedDict([("fc.weight", w), ("fc.bias", ember.zeros(3)),
                                             ("tied", w)]),
           "optim": opt_state, "epoch": 7, "tag": "run-1", "big": 2**70,
           "pair": (ember.arange(3), [1.5, "x", None, True]), "dt": ember.float16,
           "shape": ember.Size([2, 3]), "z": 1 + 2j}
    # A checkpoint with structure goes to PyTorch's format by default, which torch.load reads.
    ember.save(obj, tmp_path / "ckpt.pt")
    t = torch.load(tmp_path / "ckpt.pt")
    assert t["epoch"] == 7 and t["optim"]["param_groups"][0]["betas"] == (0.9, 0.999)
    assert t["model"]["tied"].data_ptr() == t["model"]["fc.weight"].data_ptr()
    np.testing.assert_array_equal(t["model"]["fc.weight"].numpy(), w.numpy())
    # The same structure fits safetensors when asked for.
    p = tmp_path / "ckpt"
    ember.save(obj, p, format="safetensors")
    for back in (ember.load(p), ember.load(tmp_path / "ckpt.pt")):
        check_nested_checkpoint(back, w)
    assert set(ref_read(p)[0]) == {"model.fc.weight", "model.fc.bias", "optim.state.0.step",
                                   "optim.state.0.exp_avg", "optim.state.1.step",
                                   "optim.state.1.exp_avg", "pair.0"}


def check_nested_checkpoint(back, w):
    assert isinstance(back["model"], collections.OrderedDict)
    assert list(back["model"]) == ["fc.weight", "fc.bias", "tied"]
    assert back["model"]["tied"] is back["model"]["fc.weight"]  # stored once, loaded once
    np.testing.assert_array_equal(back["model"]["fc.weight"].numpy(), w.numpy())
    pg = back["optim"]["param_groups"][0]
    assert list(back["optim"]["state"]) == [0, 1]
    assert pg["betas"] == (0.9, 0.999) and pg["params"] == [0, 1] and pg["name"] is None
    assert pg["max"] == float("inf") and pg["nan"] != pg["nan"] and pg["amsgrad"] is False
    assert back["epoch"] == 7 and back["tag"] == "run-1" and back["big"] == 2**70
    assert isinstance(back["pair"], tuple) and back["pair"][1] == [1.5, "x", None, True]
    assert back["dt"] == ember.float16 and back["shape"] == ember.Size([2, 3])
    assert back["z"] == 1 + 2j
    assert back["optim"]["state"][0]["step"].dim() == 0


def test_single_tensor_list_grad_and_parameters(tmp_path):
    x = ember.randn(3).requires_grad_()
    ember.save(x, tmp_path / "t")
    y = ember.load(tmp_path / "t")
    assert y.requires_grad and y.is_leaf
    np.testing.assert_array_equal(y.detach().numpy(), x.detach().numpy())
    assert list(ref_read(tmp_path / "t")[0]) == ["0"]  # as C++ ember::save(Tensor)
    lst = [ember.ones(2), ember.arange(3), ember.nn.Parameter(ember.zeros(2))]
    ember.save(lst, tmp_path / "l")
    back = ember.load(tmp_path / "l")
    assert isinstance(back, list) and len(back) == 3
    assert list(ref_read(tmp_path / "l")[0]) == ["0", "1", "2"]  # as C++ save(vector)
    assert isinstance(back[2], ember.nn.Parameter) and back[2].requires_grad
    assert back[1].dtype == ember.int64


def test_file_objects_and_map_location(tmp_path):
    buf = io.BytesIO()
    ember.save({"a": ember.arange(4)}, buf)
    buf.seek(0)
    assert ember.load(buf, map_location="cpu")["a"].tolist() == [0, 1, 2, 3]
    data = buf.getvalue()
    assert ember.load(io.BytesIO(data))["a"].tolist() == [0, 1, 2, 3]


def test_module_state_dict_round_trip(tmp_path):
    nn = ember.nn
    if not hasattr(nn, "Linear"):
        pytest.skip("ember.nn.Linear is not available")
    m1, m2 = nn.Linear(4, 3), nn.Linear(4, 3)
    ember.save(m1.state_dict(), tmp_path / "m")
    m2.load_state_dict(ember.load(tmp_path / "m"))
    for (k1, v1), (k2, v2) in zip(m1.state_dict().items(), m2.state_dict().items()):
        assert k1 == k2
        np.testing.assert_array_equal(v1.numpy(), v2.numpy())


def test_errors(tmp_path):
    # Objects safetensors cannot hold go to PyTorch's format (test_serialize_pt.py); one that
    # cannot be pickled either is a TypeError, and no file is written.
    with pytest.raises(TypeError):
        ember.save({"a": threading.Lock()}, tmp_path / "x")
    with pytest.raises(TypeError):
        ember.save({(1, threading.Lock()): ember.ones(1)}, tmp_path / "x")
    with pytest.raises(TypeError):
        ember.save({"a": object()}, tmp_path / "x", format="safetensors")
    assert not os.path.exists(tmp_path / "x")
    with pytest.raises(RuntimeError, match="cannot open"):
        ember.load(tmp_path / "missing")
    p = tmp_path / "bad"
    good = b'{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}'

    def st(js):
        return struct.pack("<Q", len(js)) + js
    cases = {
        b"": "too short",
        struct.pack("<Q", 1 << 40): "too large",
        struct.pack("<Q", 100) + b"{}": "exceeds the file size",
        st(good): "exceed the data buffer",
        st(good) + b"\0" * 8: "tensors use 4",
        st(good.replace(b"F32", b"F8")) + b"\0" * 4: "unsupported",
        st(good.replace(b"[1]", b"[2]")) + b"\0" * 4: "need 8 bytes",
        st(good[:-1] + b',"b":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}}') + b"\0" * 6:
            "overlaps",
        st(good[:-1] + b',"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}') + b"\0" * 8:
            "duplicate",
        st(b'{"a":1}'): "expected an object",
        struct.pack("<Q", 5) + b'{"a":': "unexpected end",
    }
    for raw, msg in cases.items():
        p.write_bytes(raw)
        with pytest.raises(RuntimeError, match=msg) as e:
            ember.load(p)
        assert str(p) in str(e.value)
    # A file whose ember structure metadata is corrupt.
    ember.save({"a": ember.ones(1)}, p, metadata={})
    raw_t = {"a": torch.ones(1)}
    ref_write(p, raw_t, {"ember.structure": "{not json"})
    with pytest.raises(RuntimeError, match="corrupt"):
        ember.load(p)
