"""torch.autograd.profiler: the older profiler front end, on the same C++ profiler as
ember.profiler (record_function is the same class)."""

from ember.profiler import _Session, record_function  # noqa: F401
from ember.profiler import FunctionEvent, KeyAverages, ProfilerActivity  # noqa: F401

__all__ = ["profile", "record_function"]


class profile(_Session):
    """Records ops and ranges inside a `with` block (nothing when `enabled` is False)."""

    def __init__(self, enabled=True, *, use_cuda=False, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False,
                 use_cpu=True, experimental_config=None):
        acts = ([ProfilerActivity.CPU] if use_cpu else []) + (
            [ProfilerActivity.CUDA] if use_cuda else [])
        super().__init__(acts, record_shapes, profile_memory, with_stack)
        self.enabled = enabled
        self.with_flops = with_flops
        self.with_modules = with_modules

    def __enter__(self):
        if self.enabled:
            self.start()
        return self

    @property
    def function_events(self):
        return self.events()

    @property
    def self_cpu_time_total(self):
        """Self time summed over all events, in microseconds."""
        return self.key_averages().self_cpu_time_total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        return self.key_averages().table(
            sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width, header=header,
            top_level_events_only=top_level_events_only)
