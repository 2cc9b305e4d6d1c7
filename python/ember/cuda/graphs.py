"""CUDA Graphs: torch.cuda.CUDAGraph, graph, graph_pool_handle, make_graphed_callables."""

import gc

import ember
from ember import _C
from ember.cuda._utils import no_gpu, require

_cuda = _C._cuda

__all__ = ["CUDAGraph", "graph", "graph_pool_handle", "is_current_stream_capturing",
           "make_graphed_callables"]


def is_current_stream_capturing():
    """Whether the current stream is capturing a CUDA Graph."""
    require("is_current_stream_capturing")
    return _cuda.is_current_stream_capturing()


def graph_pool_handle():
    """An id of a memory pool that several graphs' captures may share (pass it as `pool`)."""
    require("graph_pool_handle")
    return _cuda.graph_pool_handle()


class CUDAGraph:
    """The work queued on a stream between capture_begin() and capture_end(), replayed with
    replay(). Capture on a stream other than the default stream (ember.cuda.graph does)."""

    def __init__(self):
        if not _cuda.is_available():
            raise no_gpu("CUDAGraph")
        self._g = _cuda.CUDAGraph()

    def capture_begin(self, pool=None):
        """Starts capturing the current stream (pool: share another capture's memory)."""
        self._g.capture_begin(pool)

    def capture_end(self):
        self._g.capture_end()

    def replay(self):
        """Launches the captured work on the current stream."""
        self._g.replay()

    def reset(self):
        """Frees the graph and its memory pool."""
        self._g.reset()

    def pool(self):
        """The id of the graph's memory pool (for another capture's `pool`)."""
        return self._g.pool()


class graph:
    """Captures the block's CUDA work into `cuda_graph` on `stream` (default: one side stream
    shared by all captures), in memory pool `pool`. Synchronises the device first."""

    default_capture_stream = None

    def __init__(self, cuda_graph, pool=None, stream=None):
        from ember.cuda.streams import Stream, StreamContext
        if stream is None:
            if graph.default_capture_stream is None:
                graph.default_capture_stream = Stream()
            stream = graph.default_capture_stream
        self.capture_stream = stream
        self.pool = pool
        self.cuda_graph = cuda_graph
        self._ctx = StreamContext(stream)

    def __enter__(self):
        ember.cuda.synchronize()
        # Tensors freed before the capture return their blocks now, not inside it.
        gc.collect()
        ember.cuda.empty_cache()
        self._ctx.__enter__()
        try:
            self.cuda_graph.capture_begin(self.pool)
        except BaseException:
            self._ctx.__exit__(None, None, None)
            raise

    def __exit__(self, exc_type, exc, tb):
        try:
            self.cuda_graph.capture_end()
        finally:
            self._ctx.__exit__(exc_type, exc, tb)
        return False


def _flatten(tree):
    from ember.func import tree_flatten
    return tree_flatten(tree)


def _unflatten(leaves, spec):
    from ember.func import tree_unflatten
    return tree_unflatten(leaves, spec)


def _check_inputs(callables, sample_args):
    for c, args in zip(callables, sample_args):
        if isinstance(c, ember.nn.Module):
            hooks = [getattr(c, name, None) for name in
                     ("_backward_hooks", "_forward_hooks", "_forward_pre_hooks")]
            if any(h for h in hooks):
                raise RuntimeError("make_graphed_callables: modules must not have hooks "
                                   "registered at the time they are passed")
            if any(b.requires_grad for b in c.buffers()):
                raise RuntimeError("make_graphed_callables: a module's buffers must not "
                                   "require grad")
        leaves, _ = _flatten(args)
        if not all(isinstance(a, ember.Tensor) for a in leaves):
            raise TypeError("make_graphed_callables: sample_args of each callable must be a "
                            "tuple of Tensors")


def _grads(outputs, surface, grad_outputs, allow_unused):
    """Gradients of the outputs that require grad w.r.t. the surface tensors that do."""
    outs = tuple(o for o in outputs if o.requires_grad)
    ins = tuple(i for i in surface if i.requires_grad)
    if not outs or not ins:
        return ()
    return ember.autograd.grad(outputs=outs, inputs=ins, grad_outputs=grad_outputs,
                               only_inputs=True, allow_unused=allow_unused)


def make_graphed_callables(callables, sample_args, num_warmup_iters=3,
                           allow_unused_input=False):
    """Graph-captured versions of callables (modules or functions), as PyTorch documents:
    each one's forward and backward pass are captured once into CUDA Graphs on static input
    buffers; a call copies its tensor arguments into those buffers and replays the forward
    graph, and backward replays the backward graph. `sample_args`: a tuple of tensors per
    callable (the shapes, dtypes and requires_grad of every later call). Modules keep their
    eager forward when called in the other training mode than at capture."""
    require("make_graphed_callables")
    if ember.is_autocast_enabled() and ember.is_autocast_cache_enabled():
        raise RuntimeError("make_graphed_callables does not support the autocast caching; "
                           "use autocast(cache_enabled=False)")
    just_one = not isinstance(callables, tuple)
    if just_one:
        callables = (callables,)
        sample_args = (sample_args,)
    if len(callables) != len(sample_args):
        raise ValueError("make_graphed_callables: one tuple of sample_args per callable")
    sample_args = tuple(a if isinstance(a, tuple) else (a,) for a in sample_args)
    _check_inputs(callables, sample_args)

    flat_args = [tuple(_flatten(a)[0]) for a in sample_args]
    params = [tuple(c.parameters()) if isinstance(c, ember.nn.Module) else ()
              for c in callables]
    surfaces = [flat_args[i] + params[i] for i in range(len(callables))]
    fwd_graphs = [CUDAGraph() for _ in callables]
    bwd_graphs = [CUDAGraph() for _ in callables]
    pool = graph_pool_handle()

    # Warm-up on a side stream: lazy initialisation (cuBLAS handles, workspaces, autotuning)
    # happens here, outside the captures.
    ember.cuda.synchronize()
    with ember.cuda.stream(ember.cuda.Stream()):
        for func, args, surface in zip(callables, sample_args, surfaces):
            for _ in range(num_warmup_iters):
                outputs = tuple(_flatten(func(*args))[0])
                grad_outs = tuple(ember.empty_like(o) for o in outputs if o.requires_grad)
                _grads(outputs, surface, grad_outs, allow_unused_input)
            outputs = grad_outs = None
    ember.cuda.synchronize()

    # Forward graphs in order, all in one pool.
    static_outputs, output_specs = [], []
    for func, args, fwd in zip(callables, sample_args, fwd_graphs):
        with graph(fwd, pool=pool):
            out = func(*args)
        leaves, spec = _flatten(out)
        static_outputs.append(tuple(leaves))
        output_specs.append(spec)

    # Backward graphs in reverse order, as a backward pass through them would run.
    static_grad_outputs = [None] * len(callables)
    static_grad_inputs = [None] * len(callables)
    for i in reversed(range(len(callables))):
        grad_outs = tuple(ember.empty_like(o) if o.requires_grad else None
                          for o in static_outputs[i])
        with graph(bwd_graphs[i], pool=pool):
            grads = _grads(static_outputs[i], surfaces[i],
                           tuple(g for g in grad_outs if g is not None), allow_unused_input)
        it = iter(grads)
        static_grad_inputs[i] = tuple(next(it, None) if a.requires_grad else None
                                      for a in surfaces[i])
        static_grad_outputs[i] = grad_outs

    results = []
    for i, func in enumerate(callables):
        fn = _graphed_function(fwd_graphs[i], bwd_graphs[i], params[i], len(flat_args[i]),
                               output_specs[i], surfaces[i], static_outputs[i],
                               static_grad_outputs[i], static_grad_inputs[i])
        if isinstance(func, ember.nn.Module):
            func.forward = _module_forward(func, func.training, fn, func.forward)
            results.append(func)
        else:
            results.append(fn)
    return results[0] if just_one else tuple(results)


def _graphed_function(fwd_graph, bwd_graph, module_params, num_user_args, output_spec,
                      surface, static_outputs, static_grad_outputs, static_grad_inputs):
    class Graphed(ember.autograd.Function):
        @staticmethod
        def forward(ctx, *inputs):
            # Arguments that are not the static buffers themselves are copied into them.
            for i in range(num_user_args):
                if surface[i].data_ptr() != inputs[i].data_ptr():
                    surface[i].copy_(inputs[i])
            fwd_graph.replay()
            return tuple(o.detach() for o in static_outputs)

        @staticmethod
        @ember.autograd.function.once_differentiable
        def backward(ctx, *grads):
            for static, g in zip(static_grad_outputs, grads):
                if static is not None and g is not None and static.data_ptr() != g.data_ptr():
                    static.copy_(g)
            bwd_graph.replay()
            # detach(): the caller gets tensors aliasing the graph's static gradients.
            return tuple(g.detach() if g is not None else None for g in static_grad_inputs)

    def functionalized(*user_args):
        leaves, _ = _flatten(user_args)
        out = Graphed.apply(*(tuple(leaves) + module_params))
        return _unflatten(list(out), output_spec)

    return functionalized


def _module_forward(module, training_at_capture, graphed, eager):
    def forward(*args):
        if module.training == training_at_capture:
            return graphed(*args)
        return eager(*args)
    return forward
