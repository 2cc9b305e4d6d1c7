"""Anomaly detection (torch.autograd.anomaly_mode)."""

import warnings

from ember._C import _autograd as _ag

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]

is_anomaly_enabled = _ag.is_anomaly_enabled
is_anomaly_check_nan_enabled = _ag.is_anomaly_check_nan_enabled


class detect_anomaly:
    """Records where each op ran in forward; a failing backward names the forward op and its
    stack, and (with check_nan) a backward that produces NaN raises."""

    def __init__(self, check_nan=True):
        self.prev = _ag.is_anomaly_enabled()
        self.prev_nan = _ag.is_anomaly_check_nan_enabled()
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        _ag._set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args):
        _ag._set_anomaly_enabled(self.prev, self.prev_nan)

    def __call__(self, func):
        import functools

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return func(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """Turns anomaly mode on or off: immediately, and restored when used with `with`."""

    def __init__(self, mode, check_nan=True):
        self.prev = _ag.is_anomaly_enabled()
        self.prev_nan = _ag.is_anomaly_check_nan_enabled()
        _ag._set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *args):
        _ag._set_anomaly_enabled(self.prev, self.prev_nan)
