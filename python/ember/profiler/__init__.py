"""Op and range profiling (torch.profiler) on ember's C++ profiler.

    with ember.profiler.profile(record_shapes=True) as prof:
        with ember.profiler.record_function("forward"):
            y = model(x)
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")

The session, the schedule, the table and the trace are C++ (ember/profiler.h); this module maps
PyTorch's names onto them.
"""

import contextlib
import weakref

from ember._C import _profiler as _P
from ember._C._profiler import (  # noqa: F401
    FunctionEvent, FunctionStats, KeyAverages, MemoryEvent, ProfilerAction, ProfilerActivity,
    is_profiler_enabled, set_stack_provider)

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler",
           "ProfilerAction", "ProfilerActivity", "record_function"]


def schedule(*, wait, warmup, active, repeat=0, skip_first=0):
    """A callable step -> ProfilerAction: `skip_first` idle steps, then `repeat` cycles (0:
    forever) of `wait` idle, `warmup` and `active` recorded steps; the last active step of a
    cycle is RECORD_AND_SAVE. AssertionError for a bad count, as PyTorch."""
    return _P.Schedule(wait=wait, warmup=warmup, active=active, repeat=repeat,
                       skip_first=skip_first)


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An on_trace_ready that writes "<dir_name>/<worker>.<time ms>.pt.trace.json[.gz]"."""
    return _P.tensorboard_trace_handler(dir_name, worker_name or "", use_gzip)


def supported_activities():
    """The activities a session can record."""
    import ember
    acts = {ProfilerActivity.CPU}
    if ember.cuda.is_available():
        acts.add(ProfilerActivity.CUDA)
    return acts


class record_function(contextlib.ContextDecorator):
    """A named range in the profile while a session records (a no-op otherwise); a context
    manager and a decorator."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._open = []  # one C++ range per active __enter__ (recursion through a decorator)

    def __enter__(self):
        self._open.append(_P.RecordFunction(self.name))
        return self

    def __exit__(self, *exc):
        if self._open:
            self._open.pop().end()
        return False


class _Session:
    """The lifetime of one C++ Profile, shared by profile and autograd.profiler.profile."""

    def __init__(self, activities, record_shapes, profile_memory, with_stack, schedule=None,
                 on_trace_ready=None):
        self.activities = activities
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.schedule = schedule
        self.on_trace_ready = on_trace_ready
        self._profile = None

    def start(self):
        ready = self.on_trace_ready
        if ready is not None and not isinstance(ready, _P.TraceHandler):
            ready = _ready_callback(self, ready)
        self._profile = None  # ends a previous session before this one begins
        self._profile = _P.Profile(activities=self.activities, record_shapes=self.record_shapes,
                                   profile_memory=self.profile_memory,
                                   with_stack=self.with_stack, schedule=self.schedule,
                                   on_trace_ready=ready)

    def stop(self):
        if self._profile is not None:
            self._profile.stop()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def _session(self):
        if self._profile is None:
            raise RuntimeError("Profiler didn't finish running")
        return self._profile

    def events(self):
        """The recorded events (PyTorch's FunctionEvent), in start order."""
        return self._session().events()

    def memory_events(self):
        """The allocations and frees seen with profile_memory."""
        return self._session().memory_events()

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """Per-name totals (per name and input shapes with group_by_input_shape); `.table()`
        prints PyTorch's table."""
        if group_by_stack_n:
            raise NotImplementedError("key_averages(): group_by_stack_n is not supported")
        return self._session().key_averages(group_by_input_shape)

    def export_chrome_trace(self, path):
        """Writes the trace-event JSON (chrome://tracing, Perfetto)."""
        self._session().export_chrome_trace(str(path))


def _ready_callback(session, fn):
    """fn(session) for the C++ session's trace-ready points; holds the Python session weakly,
    so the C++ session does not keep it alive."""
    ref = weakref.ref(session)

    def ready(_):
        s = ref()
        if s is not None:
            fn(s)
    return ready


class profile(_Session):
    """torch.profiler.profile: records ops and record_function ranges between start() and
    stop() (or in a `with` block), following `schedule` when one is given."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, use_cuda=None):
        if activities is None:
            activities = supported_activities()
            if use_cuda is False:
                activities.discard(ProfilerActivity.CUDA)
        elif use_cuda:
            activities = set(activities) | {ProfilerActivity.CUDA}
        super().__init__(list(activities), record_shapes, profile_memory, with_stack, schedule,
                         on_trace_ready)
        self.with_flops = with_flops
        self.with_modules = with_modules

    def step(self):
        """Advances the schedule by one step."""
        self._session().step()

    @property
    def step_num(self):
        return 0 if self._profile is None else self._profile.step_num
