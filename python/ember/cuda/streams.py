"""torch.cuda's Stream and Event, and the current-stream functions, on _C._cuda."""

import ember
from ember import _C
from ember.cuda._utils import device_index, no_gpu, require

_cuda = _C._cuda

__all__ = ["Stream", "ExternalStream", "Event", "current_stream", "default_stream",
           "set_stream", "StreamContext", "stream"]


class Stream:
    """A CUDA stream (torch.cuda.Stream): a new stream on `device` (default: current) with
    `priority` (0 normal; negative: higher priority)."""

    def __init__(self, device=None, priority=0, **kwargs):
        if kwargs.get("_native") is not None:
            self._s = kwargs["_native"]
            return
        if not _cuda.is_available():
            raise no_gpu("Stream")
        idx = device_index(device, optional=True)
        self._s = _cuda.create_stream(idx, int(priority))

    @classmethod
    def _wrap(cls, native):
        s = cls.__new__(cls)
        s._s = native
        return s

    @property
    def cuda_stream(self):
        """The cudaStream_t as an int (0: the legacy default stream)."""
        return self._s.handle

    @property
    def device_index(self):
        return self._s.device_index

    @property
    def device(self):
        return ember.device("cuda", self._s.device_index)

    @property
    def priority(self):
        return self._s.priority

    @property
    def stream_id(self):
        return self._s.id

    def query(self):
        """True when all work queued on the stream has finished."""
        return self._s.query()

    def synchronize(self):
        """Waits for all work queued on the stream."""
        self._s.synchronize()

    def wait_event(self, event):
        """Makes future work on this stream wait for `event`."""
        event.wait(self)

    def wait_stream(self, stream):
        """Makes future work on this stream wait for the work queued on `stream` so far."""
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        """Records `event` (a new Event when None) on this stream and returns it."""
        if event is None:
            event = Event()
        event.record(self)
        return event

    @property
    def _as_parameter_(self):
        import ctypes
        return ctypes.c_void_p(self.cuda_stream)

    def __eq__(self, other):
        if isinstance(other, Stream):
            return self._s == other._s
        return NotImplemented

    def __hash__(self):
        return hash(self._s)

    def __repr__(self):
        return (f"<ember.cuda.Stream device=cuda:{self.device_index} "
                f"cuda_stream={hex(self.cuda_stream)}>")


class ExternalStream(Stream):
    """A stream allocated elsewhere (a cudaStream_t as an int), as torch.cuda.ExternalStream.
    ember does not own it: the caller keeps it alive."""

    def __init__(self, stream_ptr, device=None, **kwargs):
        if not _cuda.is_available():
            raise no_gpu("ExternalStream")
        idx = device_index(device, optional=True)
        # Ids of external streams are their handles, distinct from ember's pool ids.
        super().__init__(_native=_cuda.Stream(idx, -int(stream_ptr), int(stream_ptr)))


class Event:
    """A CUDA event (torch.cuda.Event), created on the first record."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        if not _cuda.is_available():
            raise no_gpu("Event")
        self._e = _cuda.Event(bool(enable_timing), bool(blocking), bool(interprocess))
        self.enable_timing = bool(enable_timing)

    def record(self, stream=None):
        """Records the event on `stream` (default: the current stream)."""
        self._e.record(None if stream is None else stream._s)

    def wait(self, stream=None):
        """Makes `stream` (default: current) wait for the recorded work."""
        self._e.block(None if stream is None else stream._s)

    def query(self):
        """True when the recorded work has finished (True if never recorded)."""
        return self._e.query()

    def synchronize(self):
        """Waits for the recorded work."""
        self._e.synchronize()

    def elapsed_time(self, end_event):
        """Milliseconds between this event and `end_event` (both recorded, with timing)."""
        try:
            return self._e.elapsed_time(end_event._e)
        except ValueError as e:  # torch raises RuntimeError for events without timing
            raise RuntimeError(str(e)) from None

    def ipc_handle(self):
        raise NotImplementedError("ember.cuda.Event.ipc_handle: interprocess events are not "
                                  "supported")

    @property
    def cuda_event(self):
        return self._e.handle

    def __repr__(self):
        if self._e.is_created:
            return f"<ember.cuda.Event {hex(self.cuda_event)}>"
        return "<ember.cuda.Event uninitialized>"


def current_stream(device=None):
    """The stream work is queued on for `device` (default: current), on this thread."""
    require("current_stream")
    return Stream._wrap(_cuda.current_stream(device_index(device, optional=True)))


def default_stream(device=None):
    """The default (null) stream of `device` (default: current)."""
    require("default_stream")
    return Stream._wrap(_cuda.default_stream(device_index(device, optional=True)))


def set_stream(stream):
    """Makes `stream` current on its device (None: no-op, as torch)."""
    if stream is None:
        return
    _cuda.set_stream(stream._s)


class StreamContext:
    """Makes `stream` current (and selects its device) for a `with` block; None: no-op."""

    def __init__(self, stream):
        self.stream = stream
        self._prev_device = None
        self._prev_streams = None

    def __enter__(self):
        s = self.stream
        if s is None:
            return None
        self._prev_device = _cuda.current_device()
        dev = s.device_index
        # The previous current streams of both devices are restored on exit, as torch does.
        self._prev_streams = [_cuda.current_stream(self._prev_device)]
        if dev != self._prev_device:
            self._prev_streams.append(_cuda.current_stream(dev))
            _cuda.set_device(dev)
        _cuda.set_stream(s._s)
        return s

    def __exit__(self, *exc):
        if self.stream is None or self._prev_streams is None:
            return False
        for prev in reversed(self._prev_streams):
            _cuda.set_stream(prev)
        _cuda.set_device(self._prev_device)
        self._prev_streams = None
        return False


def stream(stream):
    """StreamContext(stream): `with ember.cuda.stream(s): ...`."""
    return StreamContext(stream)
