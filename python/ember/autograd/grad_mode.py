"""Grad-mode switches (torch.autograd.grad_mode): context managers that also decorate."""

import functools
import inspect

from ember._C import _autograd as _ag

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled"]

is_grad_enabled = _ag.is_grad_enabled
is_inference_mode_enabled = _ag.is_inference_mode_enabled


class _DecoratorContextManager:
    """A context manager usable as a decorator (a fresh instance per call, generators too)."""

    def __call__(self, func):
        if inspect.isclass(func):
            raise RuntimeError("ember.no_grad and friends cannot decorate classes")
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen_wrapper(*args, **kwargs):
                gen = func(*args, **kwargs)
                try:
                    with self.clone():
                        response = gen.send(None)
                    while True:
                        try:
                            request = yield response
                        except GeneratorExit:
                            with self.clone():
                                gen.close()
                            raise
                        except BaseException:
                            with self.clone():
                                response = gen.throw(*__import__("sys").exc_info())
                        else:
                            with self.clone():
                                response = gen.send(request)
                except StopIteration as e:
                    return e.value
            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class no_grad(_DecoratorContextManager):
    """Disables gradient recording inside the block (or the decorated function)."""

    def __init__(self):
        self.prev = False

    def __enter__(self):
        self.prev = _ag.is_grad_enabled()
        _ag._set_grad_enabled(False)

    def __exit__(self, exc_type, exc_value, traceback):
        _ag._set_grad_enabled(self.prev)


class enable_grad(_DecoratorContextManager):
    """Enables gradient recording inside the block (or the decorated function)."""

    def __init__(self):
        self.prev = False

    def __enter__(self):
        self.prev = _ag.is_grad_enabled()
        _ag._set_grad_enabled(True)

    def __exit__(self, exc_type, exc_value, traceback):
        _ag._set_grad_enabled(self.prev)


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode on or off: immediately as a call, and restored when used with `with`."""

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): argument 'mode' must be bool, not "
                            f"{type(mode).__name__}")
        self.prev = _ag.is_grad_enabled()
        self.mode = mode
        _ag._set_grad_enabled(mode)

    def __call__(self, func):
        _ag._set_grad_enabled(self.prev)
        return super().__call__(func)

    def __enter__(self):
        _ag._set_grad_enabled(self.mode)

    def __exit__(self, exc_type, exc_value, traceback):
        _ag._set_grad_enabled(self.prev)

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """Inference mode: no recording and no version tracking; tensors made inside are
    inference tensors that cannot be used by autograd later."""

    def __init__(self, mode=True):
        self.mode = mode
        self._guard = None

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        # Used as a bare decorator: @inference_mode
        return cls()(mode)

    def __enter__(self):
        self._guard = _ag._InferenceModeGuard(self.mode)

    def __exit__(self, exc_type, exc_value, traceback):
        self._guard.exit()
        self._guard = None

    def clone(self):
        return self.__class__(self.mode)
