"""PyTorch's checkpoint format: files written by torch 1.13 at test time loaded by ember (with
the restricted C++ unpickler and with Python's pickle), ember.save -> torch.load round trips,
whole-object saves, hostile and corrupt files, and pickling of tensors."""

import collections
import copy
import io
import os
import pickle
import threading
import zipfile

import numpy as np
import pytest
import torch

import ember

DTYPES = ["float16", "bfloat16", "complex64", "complex128", "bool", "int8", "uint8", "int16",
          "int32", "int64", "float32", "float64"]
MODES = [True, False]  # weights_only


def e2np(t):
    t = t.detach()
    if t.dtype in (ember.bfloat16, ember.float16):
        t = t.to(ember.float32)
    return t.numpy()


def t2np(t):
    t = t.detach()
    if t.dtype in (torch.bfloat16, torch.float16):
        t = t.to(torch.float32)
    return t.numpy()


def assert_same(e, t):
    """ember tensor `e` equals torch tensor `t`: dtype, shape, strides, offset and values."""
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(e.shape) == tuple(t.shape)
    assert tuple(e.stride()) == tuple(t.stride())
    assert e.storage_offset() == t.storage_offset()
    np.testing.assert_array_equal(e2np(e), t2np(t))


def same_storage(a, b):
    return ember._C._pickle.storage_key(a)[0] == ember._C._pickle.storage_key(b)[0]


def torch_sample(name):
    dt = getattr(torch, name)
    g = torch.Generator().manual_seed(sum(map(ord, name)))
    if dt == torch.bool:
        return torch.rand(3, 4, generator=g) > 0.5
    if not dt.is_floating_point and not dt.is_complex:
        return torch.randint(-100 if name != "uint8" else 0, 100, (3, 4), generator=g).to(dt)
    return torch.randn(3, 4, generator=g, dtype=torch.float64).to(dt)


def save_torch(obj, path, **kw):
    torch.save(obj, str(path), **kw)
    return str(path)


# ---- files written by torch 1.13 ----

@pytest.mark.parametrize("weights_only", MODES)
def test_state_dict_of_every_dtype(tmp_path, weights_only):
    sd = collections.OrderedDict((n, torch_sample(n)) for n in DTYPES)
    sd["scalar"] = torch.tensor(-2.5, dtype=torch.float64)
    sd["empty"] = torch.zeros(0, 3)
    sd["empty_offset"] = torch.arange(5.)[5:]
    p = save_torch(sd, tmp_path / "sd.pt")
    back = ember.load(p, weights_only=weights_only)
    assert isinstance(back, collections.OrderedDict)
    assert list(back) == list(sd)
    for k in sd:
        assert_same(back[k], sd[k])
        assert not back[k].requires_grad


@pytest.mark.parametrize("weights_only", MODES)
def test_shared_storages_views_and_strides(tmp_path, weights_only):
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    other = torch.arange(5, dtype=torch.int64)
    sd = {"base": base, "t": base.t(), "row": base[2], "col": base[1:, 3],
          "strided": base[::2, 1::3], "expanded": other[1:2].expand(3, 4),
          "other": other, "same": base}
    p = save_torch(sd, tmp_path / "views.pt")
    back = ember.load(p, weights_only=weights_only)
    for k in sd:
        assert_same(back[k], sd[k])
    assert back["same"] is back["base"]  # one object in the file, one after loading
    # Views of one storage in the file are views of one ember storage.
    for k in ("t", "row", "col", "strided"):
        assert same_storage(back[k], back["base"])
    assert not same_storage(back["other"], back["base"])
    back["base"].add_(1000)
    np.testing.assert_array_equal(back["t"].numpy(), (base.t() + 1000).numpy())
    np.testing.assert_array_equal(back["col"].numpy(), (base[1:, 3] + 1000).numpy())
    np.testing.assert_array_equal(back["strided"].numpy(), (base[::2, 1::3] + 1000).numpy())
    back["other"][1] = 77
    assert back["expanded"].tolist() == [[77] * 4] * 3


@pytest.mark.parametrize("weights_only", MODES)
def test_nested_containers_and_parameter(tmp_path, weights_only):
    w = torch.randn(3, 2)
    obj = {"model": collections.OrderedDict([("w", w), ("b", torch.zeros(2))]),
           "list": [torch.ones(2), 3, "x", None, [w[0]]],
           "tuple": (torch.arange(3), 2.5, True, -(2 ** 70), b"\x00\xffraw"),
           5: {"deep": {"deeper": torch.tensor([1.5])}},
           "param": torch.nn.Parameter(torch.tensor([1.0, -2.0])),
           "frozen": torch.nn.Parameter(torch.tensor([3.0]), requires_grad=False),
           "grad": torch.tensor([2.0], requires_grad=True),
           "dtype": torch.float16, "shape": torch.Size([2, 3]), "set": {1, 2}}
    p = save_torch(obj, tmp_path / "nested.pt")
    back = ember.load(p, weights_only=weights_only)
    assert set(back) == set(obj) and type(back) is dict
    assert isinstance(back["model"], collections.OrderedDict)
    assert_same(back["model"]["w"], w)
    assert back["list"][1:4] == [3, "x", None]
    assert_same(back["list"][4][0], w[0])
    assert same_storage(back["list"][4][0], back["model"]["w"])
    assert isinstance(back["tuple"], tuple)
    assert back["tuple"][1:] == (2.5, True, -(2 ** 70), b"\x00\xffraw")
    assert_same(back[5]["deep"]["deeper"], torch.tensor([1.5]))
    assert isinstance(back["param"], ember.nn.Parameter) and back["param"].requires_grad
    assert back["param"].tolist() == [1.0, -2.0]
    assert isinstance(back["frozen"], ember.nn.Parameter) and not back["frozen"].requires_grad
    assert back["grad"].requires_grad and back["grad"].is_leaf
    assert back["dtype"] == ember.float16
    assert back["shape"] == ember.Size([2, 3]) and isinstance(back["shape"], ember.Size)
    assert back["set"] == {1, 2}


@pytest.mark.parametrize("weights_only", MODES)
def test_optimizer_checkpoint(tmp_path, weights_only):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    model(torch.randn(8, 4)).pow(2).mean().backward()
    opt.step()
    ckpt = {"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 1}
    p = save_torch(ckpt, tmp_path / "ckpt.pt")
    back = ember.load(p, weights_only=weights_only)
    assert back["epoch"] == 1
    for k, v in ckpt["model"].items():
        assert_same(back["model"][k], v)
    # The state dict's version metadata survives (load_state_dict reads it).
    assert back["model"]._metadata == ckpt["model"]._metadata
    st, bst = ckpt["optim"]["state"], back["optim"]["state"]
    assert list(bst) == list(st)
    for i in st:
        for k in ("step", "exp_avg", "exp_avg_sq"):
            assert_same(bst[i][k], st[i][k])
    assert back["optim"]["param_groups"] == ckpt["optim"]["param_groups"]
    # And ember's own model takes the weights.
    net = ember.nn.Sequential(ember.nn.Linear(4, 3), ember.nn.ReLU(), ember.nn.Linear(3, 1))
    net.load_state_dict(back["model"])
    x = torch.randn(5, 4)
    np.testing.assert_allclose(net(ember.tensor(x.numpy())).detach().numpy(),
                               model(x).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_map_location(tmp_path):
    p = save_torch({"a": torch.arange(3.)}, tmp_path / "m.pt")
    seen = []

    def fn(storage, loc):
        seen.append(loc)
        return storage
    for wo in MODES:
        assert ember.load(p, map_location="cpu", weights_only=wo)["a"].tolist() == [0, 1, 2]
        assert ember.load(p, map_location={"cpu": "cpu"}, weights_only=wo)["a"].tolist() == \
            [0, 1, 2]
        assert ember.load(p, map_location=fn, weights_only=wo)["a"].tolist() == [0, 1, 2]
        assert ember.load(p, map_location=ember.device("cpu"), weights_only=wo)["a"].sum() == 3
    assert seen == ["cpu", "cpu"]


def test_file_objects(tmp_path):
    buf = io.BytesIO()
    torch.save({"a": torch.arange(4)}, buf)
    for wo in MODES:
        buf.seek(0)
        assert ember.load(buf, weights_only=wo)["a"].tolist() == [0, 1, 2, 3]
    assert ember.load(buf.getvalue(), weights_only=True)["a"].tolist() == [0, 1, 2, 3]
    out = io.BytesIO()
    ember.save({"a": ember.arange(4), "n": np.arange(2)}, out)
    out.seek(0)
    back = torch.load(out)
    assert back["a"].tolist() == [0, 1, 2, 3] and back["n"].tolist() == [0, 1]


def test_deflated_records(tmp_path):
    sd = {n: torch_sample(n) for n in ("float32", "int64", "complex128")}
    buf = io.BytesIO()
    torch.save(sd, buf)
    p = tmp_path / "deflate.pt"
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as src, \
            zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info.filename))
    for wo in MODES:
        back = ember.load(p, weights_only=wo)
        for k in sd:
            assert_same(back[k], sd[k])


# ---- ember.save -> torch.load ----

def test_state_dict_to_torch(tmp_path):
    sd = collections.OrderedDict()
    for n in DTYPES:
        sd[n] = ember.tensor(t2np(torch_sample(n))).to(getattr(ember, n))
    p = tmp_path / "sd.pt"
    ember.save(sd, p, format="torch")
    back = torch.load(p)
    assert isinstance(back, collections.OrderedDict) and list(back) == list(sd)
    for k in sd:
        assert_same(sd[k], back[k])
    back2 = torch.load(p, weights_only=True)  # only torch's allowed globals were written
    assert list(back2) == list(sd)


def test_views_share_storage_in_torch(tmp_path):
    base = ember.arange(24, dtype=ember.float64).reshape(4, 6)
    obj = {"base": base, "t": base.t(), "row": base[2], "col": base[1:, 3],
           "strided": base[::2, 1::3], "same": base, "list": [base[0], (base[1, 1:],)]}
    p = tmp_path / "views.pt"
    ember.save(obj, p, _use_new_zipfile_serialization=True)
    back = torch.load(p)
    for k in ("base", "t", "row", "col", "strided"):
        assert_same(obj[k], back[k])
    assert back["same"] is back["base"]
    assert len(zipfile.ZipFile(p).namelist()) == 3  # data.pkl, one storage, version
    back["base"].add_(100)
    assert back["t"][3, 2].item() == base.t()[3, 2].item() + 100
    assert back["list"][1][0].tolist() == (base[1, 1:] + 100).tolist()
    assert back["col"].tolist() == (base[1:, 3] + 100).tolist()


def test_nested_objects_and_arrays_to_torch(tmp_path):
    p = ember.nn.Parameter(ember.tensor([1.0, 2.0]))
    obj = {"p": p, "grad": ember.ones(2).requires_grad_(), "arr": np.arange(6).reshape(2, 3),
           "tup": (1, 2.5, "s", None, b"raw", -(2 ** 80)), "dt": ember.float32,
           "size": ember.Size([3, 4]), "dev": ember.device("cpu"), 7: [ember.zeros(1)]}
    p_out = tmp_path / "obj.pt"
    ember.save(obj, p_out)  # NumPy inside: PyTorch's format, chosen automatically
    assert zipfile.is_zipfile(p_out)
    back = torch.load(p_out)
    assert isinstance(back["p"], torch.nn.Parameter) and back["p"].tolist() == [1.0, 2.0]
    assert back["grad"].requires_grad
    np.testing.assert_array_equal(back["arr"], np.arange(6).reshape(2, 3))
    assert back["tup"] == (1, 2.5, "s", None, b"raw", -(2 ** 80))
    assert back["dt"] is torch.float32 and back["size"] == torch.Size([3, 4])
    assert isinstance(back["size"], torch.Size) and back["dev"] == torch.device("cpu")
    assert back[7][0].tolist() == [0.0]
    again = ember.load(p_out)
    assert isinstance(again["p"], ember.nn.Parameter) and again["dt"] == ember.float32
    np.testing.assert_array_equal(again["arr"], obj["arr"])


def test_whole_module_and_optimizer(tmp_path):
    ember.manual_seed(0)
    net = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.Tanh(), ember.nn.Linear(8, 2))
    opt = ember.optim.Adam(net.parameters(), lr=1e-2)
    net(ember.randn(3, 4)).sum().backward()
    opt.step()
    p = tmp_path / "model.pt"
    ember.save({"net": net, "opt": opt.state_dict()}, p)
    back = ember.load(p)
    net2 = back["net"]
    assert isinstance(net2, ember.nn.Sequential) and net2 is not net
    x = ember.randn(5, 4)
    np.testing.assert_array_equal(net2(x).detach().numpy(), net(x).detach().numpy())
    assert isinstance(net2[0].weight, ember.nn.Parameter) and net2[0].weight.requires_grad
    # The reloaded module trains.
    net2(x).sum().backward()
    assert net2[0].weight.grad is not None
    ember.save(net, p)
    assert isinstance(ember.load(p), ember.nn.Sequential)


def test_unsavable_object_leaves_no_file(tmp_path):
    p = tmp_path / "x.pt"
    with pytest.raises(TypeError, match="state_dict"):
        ember.save({"lock": threading.Lock(), "a": ember.ones(1)}, p)
    assert not os.path.exists(p) and os.listdir(tmp_path) == []
    ember.save({"a": ember.ones(1)}, p, format="torch")
    before = p.read_bytes()
    with pytest.raises(TypeError, match="_thread.lock"):
        ember.save([threading.Lock()], p)
    assert p.read_bytes() == before  # the old file is untouched
    with pytest.raises(ValueError, match="unknown format"):
        ember.save({}, p, format="npz")


# ---- hostile and broken files ----

def write_archive(path, pkl, records=()):
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", pkl)
        for name, data in records:
            z.writestr(f"archive/{name}", data)
        z.writestr("archive/version", "3\n")


def test_hostile_pickles_are_refused(tmp_path):
    marker = tmp_path / "ran"
    cmd = f"touch {marker}"

    class System:
        def __reduce__(self):
            return (os.system, (cmd,))

    class Eval:
        def __reduce__(self):
            return (eval, (f"open({str(marker)!r}, 'w')",))

    cases = [(pickle.dumps({"a": System()}, protocol=2), "posix.system"),
             (pickle.dumps([Eval()], protocol=4), "builtins.eval"),
             (pickle.dumps(collections.OrderedDict(x=Eval()), protocol=5), "builtins.eval")]
    for k, (pkl, name) in enumerate(cases):
        p = tmp_path / f"evil{k}.pt"
        write_archive(p, pkl)
        with pytest.raises(pickle.UnpicklingError, match=f"refusing to load global '{name}'"):
            ember.load(p, weights_only=True)
        assert not marker.exists()
    # A persistent id that is not a storage record, and a storage with no record.
    with pytest.raises(pickle.UnpicklingError, match="no record"):
        buf = io.BytesIO()
        torch.save({"a": torch.ones(2)}, buf)
        with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
            write_archive(tmp_path / "missing.pt", z.read("archive/data.pkl"))
        ember.load(tmp_path / "missing.pt", weights_only=True)


def test_geometry_outside_the_storage_is_refused(tmp_path):
    t = torch.arange(4.)
    buf = io.BytesIO()
    torch.save({"a": t}, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        pkl, data = z.read("archive/data.pkl"), z.read("archive/data/0")
    # Size (4,) -> (9,): past the 4-element storage.
    bad = pkl.replace(b"K\x04\x85", b"K\x09\x85", 1)
    assert bad != pkl
    write_archive(tmp_path / "big.pt", bad, [("data/0", data)])
    with pytest.raises(pickle.UnpicklingError, match="reaches element 8"):
        ember.load(tmp_path / "big.pt", weights_only=True)
    with pytest.raises(RuntimeError, match="does not fit its storage"):
        ember.load(tmp_path / "big.pt", weights_only=False)


def test_truncated_and_corrupt_archives(tmp_path):
    buf = io.BytesIO()
    torch.save({"a": torch.arange(64.), "b": torch.ones(3, dtype=torch.int32)}, buf)
    raw = buf.getvalue()
    p = tmp_path / "cut.pt"
    for n in (4, 30, len(raw) // 2, len(raw) - 30, len(raw) - 1):
        p.write_bytes(raw[:n])
        for wo in MODES:
            with pytest.raises(RuntimeError, match="zip"):
                ember.load(p, weights_only=wo)
    # A flipped bit in a storage's data fails its CRC.
    at = raw.index(np.arange(64, dtype=np.float32)[10:12].tobytes())
    broken = bytearray(raw)
    broken[at] ^= 0x01
    p.write_bytes(bytes(broken))
    with pytest.raises(RuntimeError, match="CRC"):
        ember.load(p, weights_only=False)
    with pytest.raises(pickle.UnpicklingError, match="CRC"):
        ember.load(p, weights_only=True)
    # A corrupt pickle.
    write_archive(p, b"\x80\x02}q\x00(X\x01\x00\x00\x00a")
    with pytest.raises(pickle.UnpicklingError, match="ends before its STOP"):
        ember.load(p, weights_only=True)


def test_unknown_and_legacy_formats(tmp_path):
    p = tmp_path / "junk.bin"
    p.write_bytes(b"GIF89a\x01\x00\x01\x00junk")
    with pytest.raises(RuntimeError, match="expected a safetensors file or a PyTorch checkpoint"
                                           ".*found the bytes 47 49 46 38"):
        ember.load(p)
    legacy = tmp_path / "legacy.pt"
    torch.save(torch.ones(2), legacy, _use_new_zipfile_serialization=False)
    with pytest.raises(NotImplementedError, match="legacy"):
        ember.load(legacy)
    ts = tmp_path / "script.pt"
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), str(ts))
    with pytest.raises(NotImplementedError, match="TorchScript"):
        ember.load(ts, weights_only=True)
    z = tmp_path / "plain.zip"
    with zipfile.ZipFile(z, "w") as f:
        f.writestr("readme.txt", "hi")
    with pytest.raises(RuntimeError, match="without a data.pkl"):
        ember.load(z)


# ---- pickling tensors ----

def test_pickle_and_copy_tensors():
    base = ember.arange(12, dtype=ember.float32).reshape(3, 4)
    obj = {"t": base.t(), "row": base[1], "c": ember.tensor([1 + 2j, 3 - 1j]),
           "bf": ember.ones(2, dtype=ember.bfloat16), "p": ember.nn.Parameter(ember.ones(2))}
    back = pickle.loads(pickle.dumps(obj))
    for k in ("t", "row", "c", "bf"):
        assert back[k].dtype == obj[k].dtype and tuple(back[k].stride()) == \
            tuple(obj[k].stride())
        np.testing.assert_array_equal(e2np(back[k]), e2np(obj[k]))
    back["t"].mul_(0)  # the two views still share their memory
    assert back["row"].tolist() == [0.0] * 4
    assert isinstance(back["p"], ember.nn.Parameter) and back["p"].requires_grad
    c = copy.copy(base.t())
    assert c.data_ptr() == base.data_ptr()
    d = copy.deepcopy({"a": base, "b": base[0]})
    assert d["a"].data_ptr() != base.data_ptr()
    g = pickle.loads(pickle.dumps(ember.ones(2).requires_grad_()))
    assert g.requires_grad and g.is_leaf


def test_torch_saved_whole_module_loads_as_ember_module(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    p = save_torch(model, tmp_path / "whole.pt")
    net = ember.load(p)  # torch.nn.* classes map to ember.nn.* ones
    assert isinstance(net, ember.nn.Sequential) and isinstance(net[0], ember.nn.Linear)
    x = torch.randn(5, 3)
    np.testing.assert_allclose(net(ember.tensor(x.numpy())).detach().numpy(),
                               model(x).detach().numpy(), rtol=1e-6, atol=1e-6)
    with pytest.raises(pickle.UnpicklingError,
                       match="refusing to load global 'torch.nn.modules.container.Sequential'"):
        ember.load(p, weights_only=True)


def test_pickle_protocols_and_tensor_kinds_to_torch(tmp_path):
    obj = {"zero": ember.zeros(0, 3), "scalar": ember.tensor(3.5),
           "conj": ember.tensor([1 + 2j, -1j]).conj(), "int": ember.arange(3)}
    for proto in (2, 3, 4, 5):
        p = tmp_path / f"p{proto}.pt"
        ember.save(obj, p, pickle_protocol=proto)
        back = torch.load(p)
        assert back["zero"].shape == (0, 3) and back["scalar"].item() == 3.5
        assert back["conj"].tolist() == [1 - 2j, 1j] and back["int"].tolist() == [0, 1, 2]
        again = ember.load(p, weights_only=True)
        assert again["conj"].tolist() == [1 - 2j, 1j] and again["scalar"].dim() == 0
