"""ember.nn.parallel: DataParallel and DistributedDataParallel.

ember has no GPU data parallelism yet: with no CUDA device, PyTorch's DataParallel simply runs
the wrapped module, and so does ember's. DistributedDataParallel replicates the module across
processes and averages gradients over ember.distributed (see distributed.py).
"""

from ember.nn.modules.module import Module

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]


class DataParallel(Module):
    """Runs `module`; its parameters appear under "module." as in PyTorch's state_dict."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel expects an nn.Module, got {type(module).__name__}")
        self.module = module
        self.dim = dim
        if device_ids:
            raise RuntimeError("DataParallel: ember does not split batches across CUDA devices "
                               f"(device_ids={list(device_ids)}); pass no device_ids to run the "
                               "module on its own device")
        self.device_ids = []
        self.output_device = None

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """Functional DataParallel: runs `module(*inputs, **module_kwargs)`."""
    if device_ids:
        raise RuntimeError("data_parallel: ember does not split batches across CUDA devices")
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return module(*inputs, **(module_kwargs or {}))


from ember.nn.parallel.distributed import DistributedDataParallel  # noqa: E402
