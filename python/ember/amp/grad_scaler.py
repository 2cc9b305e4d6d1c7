"""GradScaler: loss scaling for mixed-precision training (torch.cuda.amp.GradScaler).

The loss is multiplied by a scale so that small float16 gradients do not underflow; before the
optimizer step the gradients are divided by it again (`unscale_`), and a step whose gradients
hold an inf or NaN is skipped. `update` then adjusts the scale: it backs off after a skipped
step and grows after `growth_interval` clean steps in a row (Note [Loss scale update] in
src/kernels/cpu/amp/amp.cpp). The scale and the inf flags stay tensors on the gradients' device
until read.

Unlike torch 1.13, which disables the scaler when CUDA is missing, ember's scaler works on the
device of the tensors it scales, the CPU included.
"""

from collections import abc, defaultdict
from enum import Enum

import ember
from ember import _C

__all__ = ["GradScaler", "OptState"]


class _MultiDeviceReplicator:
    """Lazily copies a tensor to the devices that ask for it."""

    def __init__(self, master_tensor):
        self.master = master_tensor
        self._per_device_tensors = {}

    def get(self, device):
        key = str(device)
        retval = self._per_device_tensors.get(key, None)
        if retval is None:
            retval = self.master.to(device=device, copy=True)
            self._per_device_tensors[key] = retval
        return retval


class OptState(Enum):
    """Where an optimizer is in the scale -> unscale_ -> step -> update cycle."""
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """Scales losses and unscales gradients; skips optimizer steps with inf/NaN gradients.

    Args:
        device: the device type the scaler is meant for ("cuda" or "cpu"); the scale itself is
            made on the device of the first tensor passed to `scale`.
        init_scale: the initial scale.
        growth_factor: the factor the scale grows by after `growth_interval` clean steps (> 1).
        backoff_factor: the factor the scale shrinks by after a step with inf/NaN (< 1).
        growth_interval: the number of consecutive clean steps before the scale grows.
        enabled: False makes every method a pass-through (`scale` returns its input, `step`
            just steps).
    """

    def __init__(self, device="cuda", init_scale=2.0**16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if self._enabled:
            assert growth_factor > 1.0, "The growth factor must be > 1.0."
            assert backoff_factor < 1.0, "The backoff factor must be < 1.0."
            self._init_scale = init_scale
            # Made on first use, on the device of the scaled outputs.
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = ("This may indicate your script did not use scaler.scale(loss or outputs) earlier "
               "in the iteration.")
        assert self._scale is not None, f"Attempted {funcname} but _scale is None.  " + fix
        assert self._growth_tracker is not None, (
            f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return (self._scale, self._growth_tracker)

    def _lazy_init_scale_growth_tracker(self, dev):
        assert self._growth_tracker is None, "_growth_tracker initialized before _scale"
        self._scale = ember.full((1,), self._init_scale, dtype=ember.float32, device=dev)
        self._growth_tracker = ember.full((1,), self._init_growth_tracker, dtype=ember.int32,
                                          device=dev)

    def scale(self, outputs):
        """`outputs` (a tensor, or an iterable of them, nested) multiplied by the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, ember.Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device, non_blocking=True)

        stash = []  # one replicator for the whole call

        def apply_scale(val):
            if isinstance(val, ember.Tensor):
                if len(stash) == 0:
                    if self._scale is None:
                        self._lazy_init_scale_growth_tracker(val.device)
                    stash.append(_MultiDeviceReplicator(self._scale))
                return val * stash[0].get(val.device)
            if isinstance(val, abc.Iterable):
                iterable = map(apply_scale, val)
                if isinstance(val, (list, tuple)):
                    return type(val)(iterable)
                return iterable
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        per_device_inv_scale = _MultiDeviceReplicator(inv_scale)
        per_device_found_inf = _MultiDeviceReplicator(found_inf)
        # Grouped by device and dtype: one call of the op per group.
        per_device_and_dtype_grads = defaultdict(lambda: defaultdict(list))
        with ember.no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    if (not allow_fp16) and param.grad.dtype == ember.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    to_unscale = param.grad
                    per_device_and_dtype_grads[str(to_unscale.device)][to_unscale.dtype].append(
                        to_unscale)
            for device, per_dtype_grads in per_device_and_dtype_grads.items():
                for grads in per_dtype_grads.values():
                    _C._amp_foreach_non_finite_check_and_unscale_(
                        grads, per_device_found_inf.get(device), per_device_inv_scale.get(device))
        return per_device_found_inf._per_device_tensors

    def unscale_(self, optimizer):
        """Divides the gradients of `optimizer`'s params by the scale (in place), once per
        iteration, and records whether any of them is inf/NaN."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update().")
        elif optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # The reciprocal in float64: float32 division may be imprecise under some compile flags.
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = ember.full((1,), 0.0, dtype=ember.float32, device=self._scale.device)
        optimizer_state["found_inf_per_device"] = self._unscale_grads_(
            optimizer, inv_scale, found_inf, False)
        optimizer_state["stage"] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer, optimizer_state, *args, **kwargs):
        retval = None
        if not sum(v.item() for v in optimizer_state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        return retval

    def step(self, optimizer, *args, **kwargs):
        """Unscales the gradients (unless `unscale_` already did) and runs `optimizer.step`
        unless they hold an inf/NaN; returns what `optimizer.step` returned, or None."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if getattr(optimizer, "_step_supports_amp_scaling", False):
            # The optimizer unscales and checks for infs itself.
            retval = optimizer.step(*args, **dict(kwargs, grad_scaler=self))
            optimizer_state["stage"] = OptState.STEPPED
            return retval
        if optimizer_state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        assert len(optimizer_state["found_inf_per_device"]) > 0, (
            "No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, optimizer_state, *args, **kwargs)
        optimizer_state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Updates the scale after the iteration's steps (or sets it to `new_scale`, a float or a
        1-element float32 tensor), and starts a new iteration."""
        if not self._enabled:
            return
        _scale, _growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element float32 tensor with "
                          "requires_grad=False.")
                assert isinstance(new_scale, ember.Tensor), reason
                assert new_scale.dtype == ember.float32, reason
                assert new_scale.numel() == 1, reason
                assert new_scale.requires_grad is False, reason
                self._scale.copy_(new_scale)
        else:
            found_infs = [found_inf.to(device=_scale.device, non_blocking=True)
                          for state in self._per_optimizer_states.values()
                          for found_inf in state["found_inf_per_device"].values()]
            assert len(found_infs) > 0, "No inf checks were recorded prior to update."
            found_inf_combined = found_infs[0]
            for extra in found_infs[1:]:
                found_inf_combined = found_inf_combined + extra
            _C._amp_update_scale_(_scale, _growth_tracker, found_inf_combined,
                                  self._growth_factor, self._backoff_factor,
                                  self._growth_interval)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _get_scale_async(self):
        return self._scale

    def get_scale(self):
        """The current scale as a Python float (1.0 when disabled)."""
        if self._enabled:
            return self._init_scale if self._scale is None else self._get_scale_async().item()
        return 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if self._enabled:
            return (self._init_growth_tracker if self._growth_tracker is None
                    else self._growth_tracker.item())
        return 0

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        """scale, growth_factor, backoff_factor, growth_interval and _growth_tracker (an empty
        dict when disabled)."""
        if self._enabled:
            return {"scale": self.get_scale(),
                    "growth_factor": self._growth_factor,
                    "backoff_factor": self._backoff_factor,
                    "growth_interval": self._growth_interval,
                    "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            assert len(self._per_optimizer_states) == 0, (
                "A GradScaler instance may only be pickled at the beginning of an iteration, or "
                "at the end after scaler.update().")
            # The scale travels as a number; the tensors are made again on first use.
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    def _check_inf_per_device(self, optimizer):
        _scale, _ = self._check_scale_growth_tracker("_check_inf_per_device")
        dummy_inv_scale = ember.full((1,), 1.0, dtype=ember.float32, device=_scale.device)
        found_inf = ember.full((1,), 0.0, dtype=ember.float32, device=_scale.device)
        self._per_optimizer_states[id(optimizer)]["found_inf_per_device"] = \
            self._unscale_grads_(optimizer, dummy_inv_scale, found_inf, True)
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]

    def _found_inf_per_device(self, optimizer):
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]

