"""One front end for nn: the C++ API (include/ember/nn) and the Python package (ember.nn) must
describe the same layers and functions.

- every C++ module has a Python twin whose constructor takes the same options, and back;
- every Python functional is the binding of a C++ functional form (ember._C._nn.functional),
  every binding has its C++ form, and every C++ form is reachable from Python.

The C++ side is read from the public headers through the C preprocessor (so macro-generated
modules and option structs count), not from a hand-kept list. The allowlists below hold only
differences that PyTorch and libtorch themselves have; anything new on either side without its
twin fails. The rest of the file checks what moved into C++: channel_shuffle, lp_pool3d,
triplet_margin_with_distance_loss, the in-place activations, nn warnings as UserWarning, and
packed sequences through the C++ RNN forward.
"""

import inspect
import re
import shutil
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as tnn
import torch.nn.functional as TF
import torch.nn.utils.rnn as trnn

import ember
import ember.nn as enn
import ember.nn.functional as EF
import ember.nn.utils.rnn as ernn
from _oracle import to_ember, to_torch

ROOT = Path(__file__).resolve().parents[2]

# ---- allowlists: deliberate differences that PyTorch / libtorch have themselves ----

# C++ modules without a Python class.
CPP_ONLY_MODULES = {
    "Functional",  # libtorch's wrapper of a C++ callable; Python passes the function itself
}
# Python modules without a C++ class.
PY_ONLY_MODULES = {
    "Module", "Container", "RNNBase", "RNNCellBase",  # Python base classes
    "NLLLoss2d",  # deprecated alias of NLLLoss in PyTorch; libtorch has none
    "UpsamplingNearest2d", "UpsamplingBilinear2d",  # deprecated in PyTorch; libtorch has none
    "SyncBatchNorm",  # libtorch has none (torch's is Python over torch.distributed)
}
# Gaps still to close (not deliberate): the test fails once one is closed, so the entry goes.
KNOWN_GAPS = {
    "FractionalMaxPool2d", "FractionalMaxPool3d",  # F::fractional_max_pool2d/3d exist in C++
}
# Constructors that take the contents (modules, parameters), not options.
CONTAINERS = {"Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"}
# Python-only constructor arguments.
PY_ONLY_OPTIONS = {
    "size_average", "reduce",  # PyTorch's deprecated pair before `reduction`; libtorch dropped it
    "return_indices",  # libtorch returns the indices from forward_with_indices instead
    "min_value", "max_value",  # Hardtanh's deprecated aliases of min_val / max_val
    "recompute_scale_factor",  # nn.Upsample's; libtorch's UpsampleOptions has none
    "mask_check",  # nn.TransformerEncoder's; libtorch's TransformerEncoderOptions has none
}
# C++-only options: (module, option).
CPP_ONLY_OPTIONS = {
    ("AvgPool1d", "divisor_override"),  # libtorch's AvgPoolOptions<1> has it; nn.AvgPool1d not
}
# The same option under another name in Python.
PY_NAMES = {"lambd": "lambda"}  # `lambda` is a Python keyword
MODULE_PY_NAMES = {("Unflatten", "unflattened_size"): "sizes"}

# Bindings without an ember::nn::functional form: PyTorch's deprecated aliases of ops.
BINDING_ONLY = {
    "sigmoid", "tanh",  # F.sigmoid / F.tanh: aliases of the ember ops
    "upsample", "upsample_nearest", "upsample_bilinear",  # deprecated names of interpolate
    "pdist",  # F.pdist: the op ember::pdist (ember/stats.h)
}


# ---- the C++ side, from the preprocessed public headers ----

def _preprocess():
    cxx = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    if cxx is None:
        pytest.skip("no C++ preprocessor to read the headers with")
    src = '#include "ember/nn.h"\n#include "ember/nn/layers.h"\n'
    return subprocess.run([cxx, "-std=c++20", "-E", "-P", "-I" + str(ROOT / "include"), "-x",
                           "c++", "-"], input=src, capture_output=True, text=True,
                          check=True).stdout


def _body(text, start):
    """The text between the first '{' at or after `start` and its matching '}'."""
    i = text.index("{", start)
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i + 1:j]
    raise AssertionError("unbalanced braces")


def _flat(body):
    """`body` without the contents of nested braces (top-level declarations only)."""
    out, depth = [], 0
    for c in body:
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif depth == 0:
            out.append(c)
    return "".join(out)


@pytest.fixture(scope="module")
def cpp():
    text = _preprocess()
    modules = set(re.findall(r"class (\w+) : public (?:::ember::nn::)?ModuleHolder<\1Impl>", text))
    structs = {}
    for m in re.finditer(r"struct (\w+)\s*(?::[^{;]*)?\{", text):
        # EMBER_ARG(T, name) expands to a setter `inline auto name(const T& new_name)->...`.
        fields = re.findall(r"inline auto (\w+)\(const [^;{]*? new_\1\)->decltype\(\*this\)",
                            _body(text, m.start()))
        structs.setdefault(m.group(1), fields)
    aliases = dict(re.findall(r"using (\w+Options) = (\w+)(?:<[^;]*>)?;", text))

    def options(name):
        for _ in range(5):
            if name in structs or name not in aliases:
                break
            name = aliases[name]
        return structs.get(name, [])

    functions = set()
    for m in re.finditer(r"namespace ember::nn::functional \{", text):
        functions |= set(re.findall(r"\b(\w+)\(\s*const Tensor&", _flat(_body(text, m.start()))))
    assert {"Linear", "Conv2d", "ChannelShuffle", "LSTM"} <= modules
    assert {"conv2d", "interpolate", "channel_shuffle", "linear"} <= functions
    return {"modules": {m: options(m + "Options") for m in modules}, "functions": functions}


# ---- the Python side ----

def _python_modules():
    return {n for n in enn.modules.__all__ if inspect.isclass(getattr(enn, n, None))}


def _python_options(name):
    cls = getattr(enn, name)
    if issubclass(cls, enn.RNNBase):
        # RNN / LSTM / GRU forward *args to RNNBase(mode, ...); only LSTM takes proj_size and
        # only RNN takes nonlinearity.
        params = [p for p in inspect.signature(enn.RNNBase.__init__).parameters if p != "mode"]
        if name != "LSTM":
            params.remove("proj_size")
        if name == "RNN":
            params.append("nonlinearity")
    else:
        params = [p.name for p in inspect.signature(cls.__init__).parameters.values()
                  if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    names = set()
    for p in params:
        if p in ("self", "device", "dtype") or p in PY_ONLY_OPTIONS:
            continue
        names.add(MODULE_PY_NAMES.get((name, p), PY_NAMES.get(p, p)))
    return names


def _python_functionals():
    return {n: getattr(EF, n) for n in dir(EF)
            if not n.startswith("_") and callable(getattr(EF, n))
            and not inspect.ismodule(getattr(EF, n))}


# ---- parity ----

def test_every_cpp_module_has_a_python_twin(cpp):
    missing = set(cpp["modules"]) - _python_modules() - CPP_ONLY_MODULES
    assert not missing, f"C++ modules without a Python class: {sorted(missing)}"


def test_every_python_module_has_a_cpp_twin(cpp):
    missing = _python_modules() - set(cpp["modules"]) - PY_ONLY_MODULES - set(KNOWN_GAPS)
    assert not missing, f"Python modules without a C++ class: {sorted(missing)}"
    closed = set(KNOWN_GAPS) & set(cpp["modules"])
    assert not closed, f"remove {sorted(closed)} from KNOWN_GAPS"


def test_allowlists_name_real_things(cpp):
    py = _python_modules()
    assert CPP_ONLY_MODULES <= set(cpp["modules"]) and not CPP_ONLY_MODULES & py
    assert PY_ONLY_MODULES <= py and not PY_ONLY_MODULES & set(cpp["modules"])
    for module, option in CPP_ONLY_OPTIONS:
        assert option in cpp["modules"][module]


def test_module_options_match(cpp):
    diffs = {}
    for name in sorted(set(cpp["modules"]) & _python_modules()):
        if name in CONTAINERS:
            continue
        c = set(cpp["modules"][name]) - {o for m, o in CPP_ONLY_OPTIONS if m == name}
        p = _python_options(name)
        if c != p:
            diffs[name] = {"C++ only": sorted(c - p), "Python only": sorted(p - c)}
    assert not diffs, diffs


def test_every_python_functional_is_a_cpp_binding():
    bindings = ember._C._nn.functional
    not_bound = [n for n, f in _python_functionals().items()
                 if getattr(bindings, n, None) is not f]
    assert not not_bound, f"Python functionals written in Python: {not_bound}"
    orphans = [n for n in dir(bindings) if not n.startswith("_") and not hasattr(EF, n)]
    assert not orphans, f"bindings missing from ember.nn.functional: {orphans}"


def test_every_binding_has_a_cpp_form(cpp):
    fns = cpp["functions"]
    no_form = [n for n in _python_functionals()
               if n not in fns and n not in BINDING_ONLY
               and not (n.endswith("_") and n[:-1] in fns)]  # in-place form: options.inplace
    assert not no_form, f"bindings without an ember::nn::functional form: {no_form}"
    assert BINDING_ONLY <= set(_python_functionals()) and not BINDING_ONLY & fns


def test_every_cpp_functional_is_reachable_from_python(cpp):
    missing = cpp["functions"] - set(_python_functionals())
    assert not missing, f"C++ functionals without a Python binding: {sorted(missing)}"


# ---- what moved into C++ ----

def _pair(shape, seed=0, dtype=np.float64):
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return ember.from_numpy(x.copy()), torch.from_numpy(x.copy())


def _close(e, t, rtol=1e-12, atol=1e-12):
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(to_torch(e.detach()).numpy(), t.detach().numpy(), rtol=rtol,
                               atol=atol)


@pytest.mark.parametrize("shape,groups", [((2, 6, 3, 4), 3), ((1, 4, 5), 2), ((0, 6, 2), 2),
                                          ((3, 6, 1, 1, 2), 6)])
def test_channel_shuffle(shape, groups):
    e, t = _pair(shape)
    _close(EF.channel_shuffle(e, groups), TF.channel_shuffle(t, groups))
    _close(enn.ChannelShuffle(groups)(e), tnn.ChannelShuffle(groups)(t))
    assert repr(enn.ChannelShuffle(groups)) == repr(tnn.ChannelShuffle(groups))
    # Strided input; the gradient is the inverse permutation, a shuffle with C / groups groups
    # (torch 1.13 has no derivative for channel_shuffle).
    e, t = _pair(shape[:-1] + (2 * shape[-1],))
    e, t = e[..., ::2], t[..., ::2]
    _close(EF.channel_shuffle(e, groups), TF.channel_shuffle(t, groups))
    leaf = e.detach().requires_grad_()
    g = np.random.default_rng(1).standard_normal(shape)
    EF.channel_shuffle(leaf, groups).backward(ember.from_numpy(g.copy()))
    _close(leaf.grad, TF.channel_shuffle(torch.from_numpy(g.copy()), shape[1] // groups))


@pytest.mark.parametrize("args", [((2, 6, 4), 4), ((2, 6, 4), 0), ((6, 4), 2)])
def test_channel_shuffle_errors(args):
    shape, groups = args
    e, t = _pair(shape)
    with pytest.raises(RuntimeError):
        TF.channel_shuffle(t, groups)
    with pytest.raises(RuntimeError):
        EF.channel_shuffle(e, groups)


def test_lp_pool3d_matches_its_definition():
    e, t = _pair((2, 3, 4, 6, 4))
    e, t = e.abs(), t.abs()
    for p in (1.0, 2.0, 3.0):
        # (sum over each window of x^p)^(1/p), from torch's avg_pool3d (torch 1.13 has no
        # lp_pool3d).
        want = (TF.avg_pool3d(t.pow(p), (2, 3, 2)) * 12).pow(1 / p)
        _close(EF.lp_pool3d(e, p, (2, 3, 2)), want, rtol=1e-10, atol=1e-12)
        _close(enn.LPPool3d(p, (2, 3, 2))(e), want, rtol=1e-10, atol=1e-12)
        _close(EF.lp_pool3d(e, p, 2, stride=(1, 2, 1)),
               (TF.avg_pool3d(t.pow(p), 2, stride=(1, 2, 1)) * 8).pow(1 / p), rtol=1e-10,
               atol=1e-12)


@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_triplet_margin_with_distance_loss(swap, reduction):
    (a, ta), (p, tp), (n, tn) = (_pair((5, 4), s) for s in range(3))
    for fn_e, fn_t in [(None, None), (lambda x, y: (x - y).abs().sum(-1),
                                      lambda x, y: (x - y).abs().sum(-1))]:
        e = EF.triplet_margin_with_distance_loss(a, p, n, distance_function=fn_e, margin=0.7,
                                                 swap=swap, reduction=reduction)
        t = TF.triplet_margin_with_distance_loss(ta, tp, tn, distance_function=fn_t, margin=0.7,
                                                 swap=swap, reduction=reduction)
        _close(e, t)
    with pytest.raises(ValueError):
        EF.triplet_margin_with_distance_loss(a, p, n, margin=0.0)
    with pytest.raises(RuntimeError):
        EF.triplet_margin_with_distance_loss(a, p, n[0])
    with pytest.raises(TypeError):  # keyword-only, as torch
        EF.triplet_margin_with_distance_loss(a, p, n, None)


@pytest.mark.parametrize("name,kw", [("relu", {}), ("selu", {}), ("elu", {"alpha": 0.5}),
                                     ("celu", {"alpha": 2.0}), ("leaky_relu", {}),
                                     ("hardtanh", {"min_val": -0.5, "max_val": 0.5}),
                                     ("threshold", {"threshold": 0.1, "value": -2.0}),
                                     ("rrelu", {})])
def test_inplace_activations(name, kw):
    e, t = _pair((3, 4))
    out_e = getattr(EF, name + "_")(e, **kw)
    out_t = getattr(TF, name + "_")(t, **kw)
    assert out_e is e or out_e.data_ptr() == e.data_ptr()
    _close(e, t)
    _close(out_e, out_t)


def test_nn_warnings_are_user_warnings():
    e, _ = _pair((2, 3))
    with pytest.warns(UserWarning, match="target size"):
        EF.mse_loss(e, e[0])
    with pytest.warns(UserWarning, match="deprecated"):
        EF.l1_loss(e, e, size_average=False)
    with pytest.warns(UserWarning, match="Implicit dimension"):
        EF.softmax(e)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning):
            EF.dropout2d(_pair((2, 3, 4))[0])
        EF.mse_loss(e, e)  # no warning: nothing raised


@pytest.mark.parametrize("call,exc", [
    (lambda x: EF.l1_loss(x, x, reduction="avg"), ValueError),
    (lambda x: EF.interpolate(x[None], size=4, mode="bogus"), NotImplementedError),
    (lambda x: EF.interpolate(x[None], size=4, align_corners=True), ValueError),
    (lambda x: EF.interpolate(x, size=4, mode="bilinear"), NotImplementedError),
    (lambda x: EF.glu(x[0, 0, 0]), RuntimeError),
    (lambda x: EF.glu(x[0, 0, :3]), RuntimeError),
    (lambda x: EF.prelu(x, ember.ones(5)), RuntimeError),
    (lambda x: EF.embedding_bag(ember.tensor([[0, 1]]), x[0], mode="max",
                                scale_grad_by_freq=True), ValueError),
    (lambda x: EF.embedding_bag(ember.tensor([0, 1]), x[0], ember.tensor([0]), mode="mean",
                                per_sample_weights=ember.ones(2, dtype=x.dtype)),
     NotImplementedError),
    (lambda x: EF.local_response_norm(x[0], 2), ValueError),
    (lambda x: EF.group_norm(x[0, 0], 1), RuntimeError),
    (lambda x: EF.unfold(x[0], 2), NotImplementedError),
    (lambda x: EF.fold(x[0, 0], (2, 2), 1), NotImplementedError),
    (lambda x: EF.binary_cross_entropy(x.sigmoid(), x[0].sigmoid()), ValueError),
    (lambda x: EF.margin_ranking_loss(x, x, x[0]), RuntimeError),
    (lambda x: EF.dropout(x, p=1.5), ValueError),
    (lambda x: EF.relu("x"), TypeError),
])
def test_errors_keep_torch_types(call, exc):
    x = ember.from_numpy(np.random.default_rng(0).standard_normal((2, 3, 4)))
    with pytest.raises(exc):
        call(x)


def test_embedding_bag_old_argument_order_warns():
    w, _ = _pair((5, 3))
    idx = ember.tensor([[0, 1], [4, 2]])
    with pytest.warns(UserWarning, match="Argument order"):
        out = EF.embedding_bag(w, idx)
    _close(out, TF.embedding_bag(torch.tensor([[0, 1], [4, 2]]), to_torch(w)))


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_packed_rnn_matches_torch_and_padded(name):
    torch.manual_seed(0)
    tm = getattr(tnn, name)(3, 4, num_layers=2, bidirectional=True).double()
    em = getattr(enn, name)(3, 4, num_layers=2, bidirectional=True).double()
    em.load_state_dict({k: to_ember(v) for k, v in tm.state_dict().items()})
    lengths = [2, 5, 3]
    seqs = [_pair((n, 3), seed=i) for i, n in enumerate(lengths)]
    pe = ernn.pack_sequence([s[0] for s in seqs], enforce_sorted=False)
    pt = trnn.pack_sequence([s[1] for s in seqs], enforce_sorted=False)
    _close(pe.data, pt.data)
    assert pe.batch_sizes.tolist() == pt.batch_sizes.tolist()
    oe, he = em(pe)
    ot, ht = tm(pt)
    assert isinstance(oe, ernn.PackedSequence)
    _close(oe.data, ot.data, 1e-10, 1e-12)
    for a, b in zip(he if name == "LSTM" else [he], ht if name == "LSTM" else [ht]):
        _close(a, b, 1e-10, 1e-12)
    pad_e, len_e = ernn.pad_packed_sequence(oe, batch_first=True, total_length=6)
    pad_t, len_t = trnn.pad_packed_sequence(ot, batch_first=True, total_length=6)
    _close(pad_e, pad_t, 1e-10, 1e-12)
    assert len_e.tolist() == len_t.tolist() == lengths


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_clip_grad_norm_from_a_generator(dtype):
    torch.manual_seed(0)
    tm = tnn.Linear(4, 3).to(dtype)
    em = enn.Linear(4, 3).to(to_ember(torch.zeros(0, dtype=dtype)).dtype)
    em.load_state_dict({k: to_ember(v) for k, v in tm.state_dict().items()})
    x = torch.randn(5, 4, dtype=dtype)
    tm(x).pow(2).sum().backward()
    em(to_ember(x)).pow(2).sum().backward()
    tn = tnn.utils.clip_grad_norm_(tm.parameters(), 0.1)
    en = enn.utils.clip_grad_norm_(em.parameters(), 0.1)
    assert en.dtype == to_ember(tn).dtype and en.dim() == 0
    tol = 1e-12 if dtype == torch.float64 else 1e-5
    _close(en, tn, tol, tol)
    for pt, pe in zip(tm.parameters(), em.parameters()):
        _close(pe.grad, pt.grad, tol, tol)
    with pytest.raises(TypeError):
        enn.utils.clip_grad_norm_(["not a tensor"], 1.0)
