"""PyTorch's legacy tensor types (ember.FloatTensor, ember.LongTensor, ...) and the device
predicates scripts test (is_xpu, is_mps, ...).

A legacy type is a constructor and an isinstance check at once: `FloatTensor(2, 3)` makes an
uninitialised float32 tensor, `LongTensor([1, 2])` converts data, and `isinstance(t,
FloatTensor)` is true for CPU float32 tensors. The classes are not subclasses in the other
direction: every tensor is an `ember.Tensor`.
"""

import ember
from ember import _C

_TYPES = [
    ("FloatTensor", "float32"), ("DoubleTensor", "float64"), ("HalfTensor", "float16"),
    ("BFloat16Tensor", "bfloat16"), ("LongTensor", "int64"), ("IntTensor", "int32"),
    ("ShortTensor", "int16"), ("CharTensor", "int8"), ("ByteTensor", "uint8"),
    ("BoolTensor", "bool"), ("ComplexFloatTensor", "complex64"),
    ("ComplexDoubleTensor", "complex128"),
]


class _LegacyTensorMeta(type):
    def __instancecheck__(cls, obj):
        return (isinstance(obj, _C.Tensor) and obj.dtype == cls.dtype
                and obj.device.type == cls._device_type)

    def __subclasscheck__(cls, sub):
        return sub is cls

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def _is_size_args(args):
    if len(args) == 1 and isinstance(args[0], _C.Size):
        return True
    return all(isinstance(a, int) and not isinstance(a, bool) for a in args)


def _make_type(name, dtype, device_type, module):
    def __new__(cls, *args, device=None):
        if device is not None and ember.device(device).type != device_type:
            raise RuntimeError(f"legacy constructor expects device type: {device_type} but "
                               f"device type: {ember.device(device).type} was passed")
        if device_type == "cuda" and not ember.cuda.is_available():
            raise RuntimeError(f"{module}.{name}: CUDA is not available on this machine")
        dev = device_type
        if not args:
            return ember.empty(0, dtype=dtype, device=dev)
        if _is_size_args(args):
            return ember.empty(*args, dtype=dtype, device=dev)
        if len(args) != 1:
            raise TypeError(f"{name}() takes sizes (ints) or one sequence of data, got "
                            f"{len(args)} arguments of types "
                            f"{', '.join(type(a).__name__ for a in args)}")
        data = args[0]
        if isinstance(data, _C.Tensor):
            if data.dtype != dtype or data.device.type != device_type:
                raise TypeError(f"expected {device_type} ({dtype}) but got {data.device.type} "
                                f"({data.dtype})")
            return data
        if isinstance(data, (int, float, complex, bool)):
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        return ember.tensor(data, dtype=dtype, device=dev)

    ns = {"__new__": __new__, "dtype": dtype, "_device_type": device_type,
          "is_cuda": device_type == "cuda", "__module__": module,
          "__doc__": f"The legacy {device_type} {dtype} tensor type."}
    return _LegacyTensorMeta(name, (), ns)


def install(namespace, cuda_namespace):
    """Defines the legacy types in `namespace` (ember) and `cuda_namespace` (ember.cuda)."""
    names = {}
    for name, dt in _TYPES:
        dtype = getattr(ember, dt)
        namespace[name] = _make_type(name, dtype, "cpu", "ember")
        setattr(cuda_namespace, name, _make_type(name, dtype, "cuda", "ember.cuda"))
        names[dtype] = name
    return names


def legacy_type_of(obj):
    """The dtype named by a legacy type class or name string, or None."""
    if isinstance(obj, _LegacyTensorMeta):
        return obj.dtype, obj._device_type
    if isinstance(obj, str):
        parts = obj.split(".")
        device_type = "cuda" if len(parts) == 3 and parts[1] == "cuda" else "cpu"
        if len(parts) in (2, 3) and parts[0] in ("torch", "ember"):
            for name, dt in _TYPES:
                if parts[-1] == name:
                    return getattr(ember, dt), device_type
        raise ValueError(f"invalid type: '{obj}'")
    return None


_FALSE_PREDICATES = ("is_xpu", "is_mps", "is_mkldnn", "is_vulkan", "is_ipu", "is_hpu", "is_ort",
                     "is_nested")


def install_predicates(tensor_cls):
    """Device predicates for backends ember does not have: always False."""
    for name in _FALSE_PREDICATES:
        if not hasattr(tensor_cls, name):
            setattr(tensor_cls, name, property(lambda self: False,
                                               doc=f"False: ember has no {name[3:]} tensors."))
