"""ember.save / ember.load: torch.save-like persistence, in the safetensors format or in
PyTorch's own zip format.

`save` writes safetensors for a tensor or a flat dict of tensors (a state_dict) and PyTorch's
checkpoint format (readable by torch.load) for anything else: checkpoints with structure,
modules, optimizers, NumPy arrays, arbitrary picklable objects (ember/_pt_pickle.py). `format="torch"` (or any of torch's
pickle_module / pickle_protocol / _use_new_zipfile_serialization arguments) asks for PyTorch's
format. `load` tells the formats apart by their first bytes; PyTorch checkpoints load with
Python's pickle (weights_only=False, which runs the file's code: trusted files only) or with
ember's restricted unpickler (weights_only=True, which refuses everything but tensors,
containers and numbers).

A safetensors file is an ordinary safetensors file (readable by the `safetensors` package):
every tensor is stored once under a dotted key ("fc.weight", "state.0.exp_avg", "0", ...). The Python structure
around the tensors (dicts, lists, tuples, numbers, strings, None) goes to the "__metadata__"
entry "ember.structure" as JSON, so `load` rebuilds the same object. Tensors that share storage
with the same layout (tied weights, the same tensor under two keys) are stored once and load as
one tensor. Files without that entry (written by other tools or by C++ ember::save) load as a
dict {name: tensor}.
"""

import collections
import io
import json
import math
import os
import pickle
import tempfile
import warnings

import ember
from ember import _C
from ember import _pt_pickle

__all__ = ["save", "load", "safetensors_metadata"]

_STRUCTURE_KEY = "ember.structure"
_VERSION = 1


class _Encoder:
    def __init__(self):
        self.items = []  # (name, tensor)
        self.names = set()
        self.by_layout = {}  # (data_ptr, dtype, shape, strides) -> name

    def _unique(self, name):
        name = name or "tensor"
        if name not in self.names and name != "__metadata__":
            return name
        k = 1
        while f"{name}#{k}" in self.names:
            k += 1
        return f"{name}#{k}"

    def tensor(self, t, prefix):
        key = (t.data_ptr(), t.dtype, tuple(t.shape), tuple(t.stride()), t.device.type)
        if t.numel() > 0 and key in self.by_layout:
            name = self.by_layout[key]
        else:
            name = self._unique(prefix)
            self.names.add(name)
            self.items.append((name, t.detach()))
            if t.numel() > 0:
                self.by_layout[key] = name
        out = {"t": name}
        if t.requires_grad:
            out["g"] = True
        if isinstance(t, ember.nn.Parameter):
            out["p"] = True
        return out

    def value(self, o, prefix):
        if isinstance(o, ember.Tensor):
            return self.tensor(o, prefix)
        if isinstance(o, dict):
            sub = lambda k: f"{prefix}.{k}" if prefix else str(k)  # noqa: E731
            enc = {"d": [[_scalar(k, "a dict key"), self.value(v, sub(k))] for k, v in o.items()]}
            if isinstance(o, collections.OrderedDict):
                enc["o"] = True
            return enc
        if isinstance(o, (list, tuple)) and not isinstance(o, ember.Size):
            sub = lambda i: f"{prefix}.{i}" if prefix else str(i)  # noqa: E731
            items = [self.value(v, sub(i)) for i, v in enumerate(o)]
            return {"l": items} if isinstance(o, list) else {"tu": items}
        return _scalar(o, "an object")


def _scalar(o, what):
    if o is None:
        return {"n": 0}
    if isinstance(o, bool):
        return {"b": o}
    if isinstance(o, int):
        return {"i": o}
    if isinstance(o, float):
        return {"f": o if math.isfinite(o) else repr(o)}
    if isinstance(o, complex):
        return {"c": [_scalar(o.real, what), _scalar(o.imag, what)]}
    if isinstance(o, str):
        return {"s": o}
    if isinstance(o, ember.dtype):
        return {"dt": str(o).split(".")[-1]}
    if isinstance(o, ember.Size):
        return {"sz": list(o)}
    if isinstance(o, tuple):
        return {"tu": [_scalar(v, what) for v in o]}
    raise TypeError(f"ember.save: cannot save {what} of type {type(o).__name__}")


def _decode(e, tensors, made):
    if "t" in e:
        name = e["t"]
        if name not in tensors:
            raise RuntimeError(f"ember.load: the file has no tensor '{name}'")
        key = (name, bool(e.get("g")), bool(e.get("p")))
        if key not in made:
            t = tensors[name]
            if e.get("p"):
                t = ember.nn.Parameter(t, requires_grad=bool(e.get("g")))
            elif e.get("g"):
                t = t.requires_grad_(True)
            made[key] = t
        return made[key]
    if "d" in e:
        items = [(_decode(k, tensors, made), _decode(v, tensors, made)) for k, v in e["d"]]
        return collections.OrderedDict(items) if e.get("o") else dict(items)
    if "l" in e:
        return [_decode(v, tensors, made) for v in e["l"]]
    if "tu" in e:
        return tuple(_decode(v, tensors, made) for v in e["tu"])
    if "n" in e:
        return None
    if "b" in e:
        return bool(e["b"])
    if "i" in e:
        return int(e["i"])
    if "f" in e:
        return float(e["f"])
    if "c" in e:
        return complex(_decode(e["c"][0], tensors, made), _decode(e["c"][1], tensors, made))
    if "s" in e:
        return str(e["s"])
    if "dt" in e:
        return getattr(ember, e["dt"])
    if "sz" in e:
        return ember.Size(e["sz"])
    raise RuntimeError(f"ember.load: unrecognised structure entry {e!r}")


def _is_path(f):
    return isinstance(f, (str, bytes, os.PathLike))


def _save_safetensors(obj, f, metadata):
    enc = _Encoder()
    # A bare tensor is stored under "0" (as C++ ember::save(Tensor)).
    structure = enc.tensor(obj, "0") if isinstance(obj, ember.Tensor) else enc.value(obj, "")
    meta = {str(k): str(v) for k, v in (metadata or {}).items()}
    meta[_STRUCTURE_KEY] = json.dumps({"v": _VERSION, "root": structure}, separators=(",", ":"))
    if _is_path(f):
        _C._serialize.save(os.fsdecode(f), enc.items, meta)
        return
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "obj.safetensors")
        _C._serialize.save(p, enc.items, meta)
        with open(p, "rb") as src:
            f.write(src.read())


def _save_torch(obj, f, protocol):
    # The object is pickled before anything is written: one that cannot be saved leaves no file.
    try:
        pickled = _pt_pickle.pickle_pt(obj, protocol)
    except (pickle.PicklingError, TypeError, AttributeError) as e:
        msg = (f"ember.save: cannot save an object of type {type(obj).__name__}: {e}. "
               "Objects made of tensors, containers, numbers, strings and importable classes "
               "can be saved; for a model or an optimizer, consider saving its state_dict() "
               "instead")
        raise _retyped(e, msg) from e
    if not _is_path(f):
        pickled.write(f)
        return
    # Note [Atomic save] (src/serialize/safetensors.cpp): a temporary file, fsync, rename.
    path = os.fsdecode(f)
    tmp = f"{path}.tmp.{os.getpid()}"
    try:
        with open(tmp, "wb") as out:
            pickled.write(out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _retyped(e, msg):
    try:
        return type(e)(msg)
    except Exception:
        return TypeError(msg)


_TORCH_FORMATS = ("torch", "pt", "pytorch")


def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=None,
         *, metadata=None, format=None):
    """Saves `obj` to `f` (a path or a writable binary file object), atomically for paths.

    A tensor, a flat dict of tensors (a state_dict) or a flat list of tensors goes to a
    safetensors file, as does any
    container of tensors, numbers and strings when `metadata` (string entries for its header) or
    `format="safetensors"` is given. Anything else is written in PyTorch's checkpoint format,
    as torch.save does, so that torch.load reads it; so is every
    object when `format="torch"` or one of torch.save's pickle_module, pickle_protocol (default
    2) or _use_new_zipfile_serialization arguments is given. `format="safetensors"` insists on
    safetensors (TypeError when the object does not fit it)."""
    torch_args = (pickle_module, pickle_protocol, _use_new_zipfile_serialization)
    if format is None and metadata is None and any(a is not None for a in torch_args):
        format = "torch"
    if format is not None and format not in _TORCH_FORMATS and format != "safetensors":
        raise ValueError(f"ember.save: unknown format {format!r} (expected 'safetensors' or "
                         "'torch')")
    if metadata is not None and format in _TORCH_FORMATS:
        raise ValueError("ember.save: metadata is a safetensors feature; PyTorch's format has no "
                         "place for it")
    if pickle_module is not None and pickle_module is not pickle:
        raise NotImplementedError("ember.save: only Python's own pickle module is supported")
    if _use_new_zipfile_serialization is False:
        warnings.warn("ember.save writes only PyTorch's zip format; "
                      "_use_new_zipfile_serialization=False is ignored")
    protocol = 2 if pickle_protocol is None else int(pickle_protocol)
    if format in _TORCH_FORMATS:
        _save_torch(obj, f, protocol)
        return
    if format is None and metadata is None and not _is_pure_tensor_dict(obj):
        # Checkpoints with structure around their tensors (optimizer states, epochs, nested
        # dicts) go to PyTorch's format, so that torch.load reads what ember.save writes.
        _save_torch(obj, f, protocol)
        return
    _save_safetensors(obj, f, metadata)


def _is_pure_tensor_dict(obj):
    """A tensor, a flat dict of name -> tensor (a state_dict) or a flat list of tensors: what
    safetensors holds as is (and C++ ember::load reads)."""
    if isinstance(obj, ember.Tensor):
        return True
    if isinstance(obj, (list, tuple)):
        return len(obj) > 0 and all(isinstance(v, ember.Tensor) for v in obj)
    return (isinstance(obj, dict) and len(obj) > 0
            and all(isinstance(k, str) and isinstance(v, ember.Tensor) for k, v in obj.items()))


def _load_items(f):
    if _is_path(f):
        return _C._serialize.load(os.fsdecode(f))
    data = f.read() if hasattr(f, "read") else bytes(f)
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "obj.safetensors")
        with open(p, "wb") as dst:
            dst.write(data)
        return _C._serialize.load(p)


def _is_pickle(head):
    # A pickle opens with PROTO; a safetensors header length may too, so that is ruled out first.
    return not _looks_like_safetensors(head) and len(head) >= 2 and head[0] == 0x80 \
        and head[1] <= 5


def _describe(head):
    if head[:4] == b"PK\x03\x04":
        return "a zip archive"
    if _is_pickle(head):
        return "a pickle stream (the legacy, pre-1.6 torch.save format)"
    if not head:
        return "an empty file"
    return "the bytes " + " ".join(f"{b:02x}" for b in head[:8])


def _looks_like_safetensors(head):
    return len(head) >= 9 and head[8:9] == b"{"


def _load_safetensors(f, map_location, where, head):
    try:
        items, meta = _load_items(f)
    except RuntimeError as e:
        if _looks_like_safetensors(head):
            raise
        raise RuntimeError(f"ember.load: {where}: expected a safetensors file or a PyTorch "
                           f"checkpoint (a zip archive starting with 'PK\\x03\\x04'), found "
                           f"{_describe(head)} ({e})") from None
    tensors = dict(items)
    if map_location is not None:
        for k, t in tensors.items():
            if callable(map_location):
                t = map_location(t, "cpu")
            elif isinstance(map_location, dict):
                t = t.to(map_location.get("cpu", "cpu"))
            else:
                t = t.to(map_location)
            tensors[k] = t
    if _STRUCTURE_KEY not in meta:
        return tensors
    try:
        doc = json.loads(meta[_STRUCTURE_KEY])
        root = doc["root"]
    except (ValueError, KeyError, TypeError) as e:
        raise RuntimeError(f"ember.load: corrupt '{_STRUCTURE_KEY}' metadata: {e}") from None
    return _decode(root, tensors, {})


def load(f, map_location=None, pickle_module=None, *, weights_only=False, **pickle_load_args):
    """Loads what `save` or torch.save wrote, from a path, a readable binary file object or
    bytes. The format is told by the first bytes: a zip archive is a PyTorch checkpoint, else
    a safetensors file (one written by another tool loads as a dict {name: tensor}).

    PyTorch checkpoints: `weights_only=True` uses ember's restricted unpickler, which rebuilds
    tensors, containers and numbers and refuses any other global (pickle.UnpicklingError);
    `weights_only=False` uses Python's pickle, which runs code named in the file: load only
    trusted files that way. `map_location` moves tensors (a device, a string, or a dict /
    callable as torch's)."""
    # Bytes name a file unless they hold a NUL (no path does): then they are the file's data.
    if _is_path(f) and not (isinstance(f, bytes) and b"\0" in f):
        where = os.fsdecode(f)
        try:
            with open(where, "rb") as fh:
                head = fh.read(16)
        except OSError as e:
            raise RuntimeError(f"[load] cannot open {where}: {e.strerror}") from None
        source = where
    else:
        if hasattr(f, "read"):
            data = f.read()
            where = getattr(f, "name", None) or f"<{type(f).__name__}>"
        else:
            data = bytes(f)
            where = "<bytes>"
        source = bytes(data)
        head = source[:16]
        f = io.BytesIO(source)
    if head[:4] == b"PK\x03\x04":
        return _pt_pickle.load_pt(source, str(where), map_location, weights_only, pickle_module,
                                  **pickle_load_args)
    if _is_pickle(head):
        raise NotImplementedError(
            f"ember.load: {where} is in the legacy (pre-1.6) torch.save format, which ember does "
            "not read; re-save it with PyTorch >= 1.6 (torch.save(torch.load(path), path))")
    return _load_safetensors(f, map_location, where, head)


def safetensors_metadata(f):
    """The __metadata__ dict of a safetensors file (reads only the header)."""
    return _C._serialize.metadata(os.fsdecode(f))


_pt_pickle.install()
