"""ember.optim.Optimizer: torch.optim.Optimizer's API (parameter groups as dicts, per-parameter
state keyed by the parameter object, torch's state_dict format)."""

from collections.abc import MutableMapping
from copy import deepcopy
from itertools import chain

import ember
from ember import Tensor

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    """Singleton class representing a required parameter for an Optimizer."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


class _StateDict(MutableMapping):
    """The optimizer state: a defaultdict(dict) keyed by parameter identity (tensors compare
    elementwise, so they are keyed by id here; the tensor objects are kept alive with it)."""

    def __init__(self, items=()):
        self._d = {}
        for k, v in items:
            self[k] = v

    @staticmethod
    def _key(k):
        return ("t", id(k)) if isinstance(k, Tensor) else ("o", k)

    def __getitem__(self, k):
        key = self._key(k)
        if key not in self._d:
            self._d[key] = (k, {})
        return self._d[key][1]

    def __setitem__(self, k, v):
        self._d[self._key(k)] = (k, v)

    def __delitem__(self, k):
        del self._d[self._key(k)]

    def __contains__(self, k):
        return self._key(k) in self._d

    def get(self, k, default=None):
        e = self._d.get(self._key(k))
        return default if e is None else e[1]

    def __iter__(self):
        return (k for k, _ in self._d.values())

    def __len__(self):
        return len(self._d)

    def items(self):
        return [(k, v) for k, v in self._d.values()]

    def values(self):
        return [v for _, v in self._d.values()]

    def __repr__(self):
        return "{" + ", ".join(f"<param {id(k):#x}>: {v!r}" for k, v in self._d.values()) + "}"


def _typename(o):
    if isinstance(o, Tensor):
        return "ember.Tensor"
    t = type(o)
    return (t.__module__ + "." if t.__module__ not in ("builtins",) else "") + t.__qualname__


class Optimizer:
    r"""Base class for all optimizers.

    Args:
        params (iterable): an iterable of tensors or of dicts (parameter groups: a dict with
            'params' and any option that overrides the defaults).
        defaults (dict): the default options.
    """

    def __init__(self, params, defaults):
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _typename(params))
        self.state = _StateDict()
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state):
        st = state.get("state", _StateDict())
        if not isinstance(st, _StateDict):
            st = _StateDict(st.items())
        state = dict(state, state=st)
        self.__dict__.update(state)

    def __repr__(self):
        format_string = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            format_string += "\n"
            format_string += "Parameter Group {0}\n".format(i)
            for key in sorted(group.keys()):
                if key != "params":
                    format_string += "    {0}: {1}\n".format(key, group[key])
        format_string += ")"
        return format_string

    def state_dict(self):
        r"""The state as a dict: ``state`` (per parameter index) and ``param_groups`` (options
        and the indices of the group's parameters), as torch's."""
        param_mappings = {}
        start_index = 0

        def pack_group(group):
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start_index):
                param_mappings.setdefault(id(p), i)
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(param_mappings[id(k)] if isinstance(k, Tensor) else k): v
                        for k, v in self.state.items()}
        return {"state": packed_state, "param_groups": param_groups}

    def load_state_dict(self, state_dict):
        r"""Loads a dict from :meth:`state_dict` (copied; floating states take each parameter's
        dtype, except ``step``)."""
        state_dict = _copy_state(state_dict)
        groups = self.param_groups
        saved_groups = state_dict["param_groups"]
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        param_lens = (len(g["params"]) for g in groups)
        saved_lens = (len(g["params"]) for g in saved_groups)
        if any(p_len != s_len for p_len, s_len in zip(param_lens, saved_lens)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = {old_id: p for old_id, p in
                  zip(chain.from_iterable(g["params"] for g in saved_groups),
                      chain.from_iterable(g["params"] for g in groups))}

        def cast(param, value, key=None):
            if isinstance(value, Tensor):
                if key != "step" and param.is_floating_point() and value.is_floating_point():
                    value = value.to(param.dtype)
                return value
            if isinstance(value, dict):
                return {k: cast(param, v, key=k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v) for v in value)
            return value

        state = _StateDict()
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})

    def zero_grad(self, set_to_none: bool = True):
        r"""Clears the gradients of all parameters: sets them to None (default) or zeroes them
        in place (detached from any graph)."""
        with ember.no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if set_to_none:
                        p.grad = None
                    else:
                        if g.grad_fn is not None:
                            g.detach_()
                        else:
                            g.requires_grad_(False)
                        g.zero_()

    def step(self, closure=None):
        r"""Performs a single optimization step (implemented by the subclasses)."""
        raise NotImplementedError

    def add_param_group(self, param_group):
        r"""Adds a parameter group (a dict with 'params'; missing options take the defaults)."""
        if not isinstance(param_group, dict):
            raise TypeError("param group must be a dict")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(param))
            if not self.defaults.get("differentiable", None) and not (
                    param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 "optimization parameter " + name)
            param_group.setdefault(name, default)
        ids = [id(p) for p in param_group["params"]]
        if len(ids) != len(set(ids)):
            import warnings
            warnings.warn("optimizer contains a parameter group with duplicate parameters; "
                          "in future, this will cause an error", stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
        if not seen.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # Helpers for the subclasses.
    @staticmethod
    def _run_closure(closure):
        if closure is None:
            return None
        with ember.enable_grad():
            return closure()


def _copy_state(obj):
    """A deep copy of a state dict (tensors cloned)."""
    if isinstance(obj, Tensor):
        return obj.detach().clone()
    if isinstance(obj, dict):
        return {k: _copy_state(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_copy_state(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_copy_state(v) for v in obj)
    return deepcopy(obj)


def _check_sparse(p, name):
    if getattr(p.grad, "is_sparse", False):
        raise RuntimeError(name + " does not support sparse gradients")
