"""parameters_to_vector and vector_to_parameters (torch.nn.utils.convert_parameters)."""

import ember

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_param_device(param, old_param_device):
    is_cuda = getattr(param, "is_cuda", False)
    if old_param_device is None:
        return param.get_device() if is_cuda else -1
    warn = (param.get_device() != old_param_device) if is_cuda else (old_param_device != -1)
    if warn:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
    return old_param_device


def parameters_to_vector(parameters):
    """Concatenates the flattened parameters into one 1-D tensor."""
    param_device = None
    vec = []
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        vec.append(param.view(-1))
    return ember.cat(vec)


def vector_to_parameters(vec, parameters):
    """Makes each parameter's data the matching slice of `vec` (a view into it)."""
    if not isinstance(vec, ember.Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__module__}."
                        f"{type(vec).__qualname__}")
    param_device = None
    pointer = 0
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        num_param = param.numel()
        param.data = vec[pointer:pointer + num_param].view_as(param).data
        pointer += num_param
