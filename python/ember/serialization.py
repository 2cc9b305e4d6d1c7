"""ember.save / ember.load: torch.save-like persistence in the safetensors format.

A file is an ordinary safetensors file (readable by the `safetensors` package): every tensor is
stored once under a dotted key ("fc.weight", "state.0.exp_avg", "0", ...). The Python structure
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
import tempfile

import ember
from ember import _C

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


def save(obj, f, metadata=None):
    """Saves a tensor, a (nested) list/tuple/dict of tensors or a state dict to `f` (a path or a
    writable binary file object). `metadata` adds string entries to the file's __metadata__."""
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


def _load_items(f):
    if _is_path(f):
        return _C._serialize.load(os.fsdecode(f))
    data = f.read() if hasattr(f, "read") else bytes(f)
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "obj.safetensors")
        with open(p, "wb") as dst:
            dst.write(data)
        return _C._serialize.load(p)


def load(f, map_location=None, weights_only=None, **kwargs):
    """Loads what `save` wrote (a path, a readable binary file object or bytes). A file with no
    ember structure (any other safetensors file) loads as a dict {name: tensor}.
    `map_location` moves tensors (a device, a string, or a dict / callable as torch's)."""
    items, meta = _load_items(f)
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


def safetensors_metadata(f):
    """The __metadata__ dict of a safetensors file (reads only the header)."""
    return _C._serialize.metadata(os.fsdecode(f))
