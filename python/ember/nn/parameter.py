"""ember.nn.Parameter: a tensor that a Module registers as a parameter when assigned."""

import ember
from ember import _C


class Parameter(ember.Tensor):
    """A leaf tensor that shares `data`'s storage and requires grad (by default)."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = ember.empty(0)
        if not isinstance(data, ember.Tensor):
            raise TypeError(f"Parameter: expected a Tensor as data, got {type(data).__name__}")
        self = _C.Tensor.__new__(cls)
        _C.Tensor.__init__(self)
        _C._nn._set_tensor(self, data.detach())
        self.requires_grad_(requires_grad)
        return self

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.detach().clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        # The data pickles as a tensor (ember/_pt_pickle.py): storage shared with other views.
        return (Parameter, (self.detach(), self.requires_grad))


def is_parameter(obj):
    return isinstance(obj, Parameter)
