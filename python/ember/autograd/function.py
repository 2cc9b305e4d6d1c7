"""Custom differentiable functions written in Python (torch.autograd.Function)."""

from ember._C import _autograd as _ag

__all__ = ["Function", "FunctionCtx", "once_differentiable", "InplaceFunction"]


class FunctionCtx:
    """The `ctx` of a Function call: saves state from forward for backward (and jvp)."""

    def __init__(self):
        self._cpp = _ag._FunctionCtxState()
        self._dirty = ()
        self._non_differentiable = ()
        self.materialize_grads = True

    def save_for_backward(self, *tensors):
        """Saves tensors (inputs or outputs) for backward; read them with `saved_tensors`.
        They are checked against in-place modification when read."""
        self._cpp.save_for_backward(*tensors)

    def save_for_forward(self, *tensors):
        """Saves tensors for jvp (kept as given)."""
        self._saved_for_forward = tensors

    @property
    def saved_tensors(self):
        return self._cpp.saved_tensors()

    @property
    def needs_input_grad(self):
        """One bool per forward argument: whether its gradient is needed."""
        return self._cpp.needs_input_grad()

    def mark_dirty(self, *tensors):
        """Declares inputs modified in place by forward (they must be returned as outputs)."""
        self._dirty = tensors
        self._cpp.mark_dirty(*tensors)

    def mark_non_differentiable(self, *tensors):
        """Declares outputs that have no gradient."""
        self._non_differentiable = tensors
        self._cpp.mark_non_differentiable(*tensors)

    def set_materialize_grads(self, value):
        """When False, missing output gradients reach backward as None instead of zeros."""
        self.materialize_grads = bool(value)
        self._cpp.set_materialize_grads(bool(value))


class FunctionMeta(type):
    """Gives each Function subclass the `_backward_cls` name PyTorch's nodes carry."""

    def __init__(cls, name, bases, attrs):
        cls._backward_name = name + "Backward"
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Subclass with staticmethods `forward(ctx, *args)` and `backward(ctx, *grad_outputs)`
    (optionally `jvp(ctx, *tangents)`), or `forward(*args)` plus
    `setup_context(ctx, inputs, output)`; call it with `Fn.apply(*args)`."""

    def __init__(self, *args, **kwargs):
        import warnings
        warnings.warn(f"{self.__class__} should not be instantiated. Methods on autograd "
                      "functions are all static, so you should invoke them on the class itself.",
                      DeprecationWarning)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is "
                           "deprecated. Please use new-style autograd function with static "
                           "forward method.")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        if kwargs:
            raise TypeError(f"{cls.__name__}.apply() takes no keyword arguments")
        if "vjp" in _own_attrs(cls) and "backward" not in _own_attrs(cls):
            cls.backward = cls.vjp
        if any(_is_batched(a) for a in args):
            raise RuntimeError(
                f"vmap: {cls.__name__}.apply: a custom autograd.Function was called on a batched "
                f"tensor inside vmap. Custom Functions have no batching rule; compute it outside "
                f"vmap, or write it with ember operations instead.")
        return _ag._function_apply(cls, *args)


def _is_batched(x):
    from ember._C import _func
    return _func.is_batchedtensor(x)


def _own_attrs(cls):
    names = set()
    for k in cls.__mro__:
        if k is Function:
            break
        names.update(vars(k))
    return names


class InplaceFunction(Function):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


def once_differentiable(fn):
    """Marks a backward that is not itself differentiable: it runs without recording."""
    import functools
    from ember.autograd.grad_mode import no_grad

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)
    return wrapper
