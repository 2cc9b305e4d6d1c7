"""PyTorch's checkpoint format (torch.save's zip archive) for ember.save / ember.load, and the
pickling of ember tensors.

Writing: the object is pickled (protocol 2 by default, as torch.save) by a Pickler that turns
every tensor into a `torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
requires_grad, OrderedDict())` call whose storage is the persistent id
('storage', torch.FloatStorage, key, location, numel); each storage is written once, as the
record data/<key>, so tensors that share memory share it again after torch.load. Parameters,
dtypes, Size and device objects are written under torch's names too. Everything else pickles
as usual (ember modules and optimizers under their ember names).

Reading (weights_only=False): Python's pickle with a find_class that maps torch's names to
ember's (torch.X falls back to ember.X where that exists) and a persistent_load that reads the
storage records. weights_only=True goes through ember's own restricted unpickler in C++
(ember._C._pickle.Archive.unpickle), which runs no code.
"""

import collections
import importlib
import io
import pickle
import weakref
import zipfile

import ember
from ember import _C

_P = _C._pickle

# ---- names ----

_STORAGE_NAMES = {
    "bool": "BoolStorage", "uint8": "ByteStorage", "int8": "CharStorage",
    "int16": "ShortStorage", "int32": "IntStorage", "int64": "LongStorage",
    "float16": "HalfStorage", "bfloat16": "BFloat16Storage", "float32": "FloatStorage",
    "float64": "DoubleStorage", "complex64": "ComplexFloatStorage",
    "complex128": "ComplexDoubleStorage",
}
_DTYPE_OF_STORAGE = {v: k for k, v in _STORAGE_NAMES.items()}
_DTYPE_OF_STORAGE["UntypedStorage"] = "uint8"
_DTYPE_OF_STORAGE["_UntypedStorage"] = "uint8"
_DTYPE_NAMES = ["bool", "uint8", "int8", "int16", "short", "int32", "int", "int64", "long",
                "float16", "half", "bfloat16", "float32", "float", "float64", "double",
                "complex32", "chalf", "complex64", "cfloat", "complex128", "cdouble"]


def _dtype_name(dt):
    return str(dt).split(".")[-1]


class _TorchGlobal:
    """A placeholder the writer pickles as the global `module.name` of torch."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):
        raise RuntimeError(f"{self.module}.{self.name} is a name in a file, not a function")

    def __repr__(self):
        return f"<torch global {self.module}.{self.name}>"


_REBUILD_TENSOR_V2 = _TorchGlobal("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _TorchGlobal("torch._utils", "_rebuild_parameter")
_TORCH_SIZE = _TorchGlobal("torch", "Size")
_TORCH_DEVICE = _TorchGlobal("torch", "device")
_STORAGE_GLOBALS = {k: _TorchGlobal("torch", v) for k, v in _STORAGE_NAMES.items()}
_DTYPE_GLOBALS = {}


def _dtype_global(dt):
    name = _dtype_name(dt)
    if name not in _DTYPE_GLOBALS:
        _DTYPE_GLOBALS[name] = _TorchGlobal("torch", name)
    return _DTYPE_GLOBALS[name]


# ---- writing ----

class _StorageRef:
    """One storage of the file: its key, dtype and the tensor that keeps its memory alive."""

    def __init__(self, key, view):
        self.key, self.view = key, view


class _Pickler(pickle._Pickler):
    """The pure-Python pickler, so that globals can be written under torch's names."""

    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.storages = {}  # storage identity -> _StorageRef

    def _save_torch_global(self, obj):
        # As pickle's save_global, with the name given rather than looked up.
        if self.proto >= 4:
            self.save(obj.module)
            self.save(obj.name)
            self.write(pickle.STACK_GLOBAL)
        elif self.proto >= 3:
            self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
        else:
            self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("ascii"))
        self.memoize(obj)

    dispatch[_TorchGlobal] = _save_torch_global

    def save(self, obj, save_persistent_id=True):
        # dtypes pickle as the torch global of the same name (torch.float32).
        if isinstance(obj, ember.dtype):
            obj = _dtype_global(obj)
        super().save(obj, save_persistent_id)

    def persistent_id(self, obj):
        if not isinstance(obj, _StorageRef):
            return None
        v = obj.view
        name = _dtype_name(v.dtype)
        return ("storage", _STORAGE_GLOBALS[name], obj.key, str(v.device), v.numel())

    def _storage(self, t):
        ident, _ = _P.storage_key(t)
        ref = self.storages.get(ident)
        if ref is None:
            if _dtype_name(t.dtype) not in _STORAGE_NAMES:
                raise TypeError(f"ember.save: tensors of dtype {t.dtype} cannot be stored in "
                                "PyTorch's format")
            ref = _StorageRef(str(len(self.storages)), _P.storage_view(t))
            self.storages[ident] = ref
        elif ref.view.dtype != t.dtype:
            raise RuntimeError(
                "ember.save: two tensors view the same storage as different dtypes "
                f"({ref.view.dtype} and {t.dtype}), which PyTorch's format cannot store; "
                "save a .clone() of one of them")
        return ref

    def reducer_override(self, obj):
        if isinstance(obj, ember.nn.Parameter):
            return (_REBUILD_PARAMETER,
                    (obj.detach(), obj.requires_grad, collections.OrderedDict()))
        if isinstance(obj, ember.Tensor):
            t = obj.resolve_conj() if obj.is_conj() else obj
            return (_REBUILD_TENSOR_V2,
                    (self._storage(t), t.storage_offset(), tuple(t.shape), tuple(t.stride()),
                     obj.requires_grad, collections.OrderedDict()))
        if isinstance(obj, ember.Size):
            return (_TORCH_SIZE, (tuple(obj),))
        if isinstance(obj, ember.device):
            return (_TORCH_DEVICE, (str(obj),))
        return NotImplemented


class Pickled:
    """An object pickled for torch.save's format, with the storages it references."""

    def __init__(self, data, storages):
        self.data, self.storages = data, storages

    def write(self, out, archive="archive"):
        """Writes the zip archive to the binary file object `out`, one storage at a time."""
        with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
            # data.pkl first: readers take the archive's folder from the first record.
            z.writestr(f"{archive}/data.pkl", self.data)
            for ref in self.storages:
                z.writestr(f"{archive}/data/{ref.key}", _P.storage_bytes(ref.view))
            z.writestr(f"{archive}/version", "3\n")


def pickle_pt(obj, protocol=2):
    """Pickles `obj` for torch.save's format (nothing is written yet)."""
    buf = io.BytesIO()
    p = _Pickler(buf, protocol)
    p.dump(obj)
    return Pickled(buf.getvalue(), list(p.storages.values()))


def save_pt(obj, out, protocol=2):
    """Writes `obj` to the binary file object `out` in torch.save's zip format."""
    pickle_pt(obj, protocol).write(out)


# ---- reading ----

class _StorageType:
    """What find_class gives for torch.FloatStorage and friends: the dtype of a storage record."""

    def __init__(self, name):
        self.name, self.dtype = name, getattr(ember, _DTYPE_OF_STORAGE[name])


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _P.from_storage(storage, storage_offset, tuple(size), tuple(stride))


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       metadata=None):
    t = _rebuild_tensor(storage, storage_offset, size, stride)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_parameter(data, requires_grad, backward_hooks):
    return ember.nn.Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    p = _rebuild_parameter(data, requires_grad, backward_hooks)
    for k, v in (state or {}).items():
        setattr(p, k, v)
    return p


def _rebuild_from_type_v2(func, new_type, args, state):
    ret = func(*args)
    if new_type is ember.nn.Parameter and not isinstance(ret, ember.nn.Parameter):
        ret = ember.nn.Parameter(ret, ret.requires_grad)
    if isinstance(state, tuple):
        state = state[0]
    for k, v in (state or {}).items():
        setattr(ret, k, v)
    return ret


_TORCH_TO_EMBER = {
    ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter_with_state,
    ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type_v2,
    ("torch.nn.parameter", "Parameter"): None,  # ember.nn.Parameter (resolved lazily)
    ("torch", "Tensor"): None,
    ("torch._tensor", "Tensor"): None,
    ("torch", "Size"): None,
    ("torch", "device"): None,
}


def _ember_for(module, name):
    key = (module, name)
    if key in _TORCH_TO_EMBER:
        f = _TORCH_TO_EMBER[key]
        if f is not None:
            return f
        return {"Parameter": ember.nn.Parameter, "Tensor": ember.Tensor, "Size": ember.Size,
                "device": ember.device}[name]
    if module == "torch" and name in _DTYPE_NAMES:
        return getattr(ember, name)
    # torch.nn.modules.linear.Linear -> ember.nn.modules.linear.Linear, where ember has it.
    try:
        obj = importlib.import_module("ember" + module[len("torch"):])
        for part in name.split("."):
            obj = getattr(obj, part)
        return obj
    except (ImportError, AttributeError):
        return None


def restore_location(map_location):
    """torch.load's map_location as a function (storage tensor, location tag) -> tensor."""

    def default(t, location):
        if location.startswith("cuda"):
            if not ember.cuda.is_available():
                raise RuntimeError(
                    "Attempting to deserialize object on a CUDA device but "
                    "ember.cuda.is_available() is False. If you are running on a CPU-only "
                    "machine, please use ember.load with map_location=ember.device('cpu') to "
                    "map your storages to the CPU.")
            return t.to(location)
        return t

    if map_location is None:
        return default
    if isinstance(map_location, dict):
        return lambda t, loc: default(t, map_location.get(loc, loc))
    if isinstance(map_location, (str, bytes, ember.device)):
        dev = ember.device(map_location.decode() if isinstance(map_location, bytes)
                           else map_location)
        return lambda t, loc: t.to(dev)
    if callable(map_location):
        def call(t, loc):
            r = map_location(t, loc)
            return default(t, loc) if r is None else r
        return call
    raise TypeError(f"ember.load: map_location must be None, a device, a string, a dict or a "
                    f"callable, not {type(map_location).__name__}")


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, archive, restore, **kwargs):
        super().__init__(file, **kwargs)
        self.archive, self.restore, self.loaded = archive, restore, {}

    def find_class(self, module, name):
        if module == "torch.tensor":
            module = "torch._tensor"
        if module.split(".")[0] == "torch":
            if name.endswith("Storage") and name in _DTYPE_OF_STORAGE:
                return _StorageType(name)
            obj = _ember_for(module, name)
            if obj is not None:
                return obj
        return super().find_class(module, name)

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5):
            raise pickle.UnpicklingError(f"unknown persistent id {pid!r}")
        tag, stype, key, location, numel = pid
        if isinstance(tag, bytes):
            tag = tag.decode("ascii")
        if tag != "storage" or not isinstance(stype, _StorageType):
            raise pickle.UnpicklingError(f"unknown persistent id {pid!r}")
        if isinstance(location, bytes):
            location = location.decode("ascii")
        if key not in self.loaded:
            t = self.archive.load_storage(str(key), stype.dtype, int(numel))
            self.loaded[key] = self.restore(t, location)
        return self.loaded[key]


def load_pt(source, where, map_location=None, weights_only=False, pickle_module=None,
            **pickle_load_args):
    """Reads a torch.save checkpoint from a path or bytes."""
    archive = _P.Archive(source, where)
    restore = restore_location(map_location)
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                               "specified")
        try:
            return archive.unpickle(restore)
        except RuntimeError as e:
            raise pickle.UnpicklingError(
                "Weights only load failed. Re-running `ember.load` with `weights_only` set to "
                "`False` will likely succeed, but it can result in arbitrary code execution. "
                "Do it only if you get the file from a trusted source. WeightsUnpickler error: "
                + str(e)) from None
    pickle_load_args.setdefault("encoding", "utf-8")
    unpickler_cls = _Unpickler
    if pickle_module is not None and pickle_module is not pickle:
        base = pickle_module.Unpickler
        unpickler_cls = type("_ModuleUnpickler", (_Unpickler, base), {})
    data = io.BytesIO(archive.read_record("data.pkl"))
    return unpickler_cls(data, archive, restore, **pickle_load_args).load()


# ---- plain pickling of tensors (pickle.dumps, copy) ----

class _StorageData:
    """The memory behind pickled tensors. copy.copy shares it; a pickle holds its bytes once
    however many tensors view it."""

    __slots__ = ("tensor", "__weakref__")

    def __init__(self, tensor):
        self.tensor = tensor  # 1-D uint8 over the whole storage

    def __reduce__(self):
        return (_storage_from_bytes, (_P.storage_bytes(self.tensor), str(self.tensor.device)))


def _storage_from_bytes(data, device="cpu"):
    t = _P.storage_from_bytes(data, ember.uint8)
    return _StorageData(t if device == "cpu" else t.to(device))


# Storage identity -> its _StorageData while one is alive (it keeps the storage, hence the
# identity, alive), so tensors pickled together share one copy of their memory.
_live_storages = weakref.WeakValueDictionary()


def _rebuild_tensor_data(data, dtype, offset, size, stride, requires_grad):
    t = _P.from_storage(_P.storage_view(data.tensor, dtype), offset, size, stride)
    if requires_grad:
        t.requires_grad_(True)
    return t


def tensor_reduce_ex(self, proto):
    t = self.resolve_conj() if self.is_conj() else self
    ident = _P.storage_key(t)[0]
    data = _live_storages.get(ident)
    if data is None:
        data = _StorageData(_P.storage_view(t, ember.uint8))
        _live_storages[ident] = data
    return (_rebuild_tensor_data, (data, t.dtype, t.storage_offset(), tuple(t.shape),
                                   tuple(t.stride()), self.requires_grad))


def install():
    """Makes ember tensors picklable (Tensor.__reduce_ex__)."""
    ember.Tensor.__reduce_ex__ = tensor_reduce_ex
