"""Activation checkpointing (torch.utils.checkpoint): forward runs without keeping the
intermediates; backward reruns the function, with the RNG state of the first run, to get them."""

import ember
from ember.autograd.function import Function
from ember.autograd.grad_mode import enable_grad, no_grad

__all__ = ["checkpoint", "checkpoint_sequential"]


def _detach_inputs(inputs):
    out = []
    for x in inputs:
        if isinstance(x, ember.Tensor):
            y = x.detach()
            y.requires_grad_(x.requires_grad)
            out.append(y)
        else:
            out.append(x)
    return tuple(out)


class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.rng_state = ember.get_rng_state()
        # Tensors go through save_for_backward (version-checked); the rest is kept as is.
        ctx.inputs = []
        ctx.tensor_indices = []
        tensors = []
        for i, a in enumerate(args):
            if isinstance(a, ember.Tensor):
                tensors.append(a)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(a)
        ctx.save_for_backward(*tensors)
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        detached = _detach_inputs(inputs)
        rng = ember.get_rng_state() if ctx.preserve_rng_state else None
        try:
            if ctx.preserve_rng_state:
                ember.set_rng_state(ctx.rng_state)
            with enable_grad():
                outputs = ctx.run_function(*detached)
        finally:
            if rng is not None:
                ember.set_rng_state(rng)
        if isinstance(outputs, ember.Tensor):
            outputs = (outputs,)
        outs, gs = [], []
        for o, g in zip(outputs, grads):
            if isinstance(o, ember.Tensor) and o.requires_grad and g is not None:
                outs.append(o)
                gs.append(g)
        if not outs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not "
                               "necessary")
        ember.autograd.backward(outs, gs)
        return (None, None) + tuple(x.grad if isinstance(x, ember.Tensor) else None
                                    for x in detached)


def checkpoint(function, *args, use_reentrant=True, preserve_rng_state=True, **kwargs):
    """Runs `function(*args)` without saving its intermediates for backward; backward reruns it.
    Gradients equal those of the plain call."""
    if use_reentrant and kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if kwargs:
        def function_(*a, _f=function, _kw=kwargs):
            return _f(*a, **_kw)
    else:
        function_ = function
    if not ember.is_grad_enabled() or not any(
            isinstance(a, ember.Tensor) and a.requires_grad for a in args):
        if use_reentrant and ember.is_grad_enabled():
            import warnings
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None")
        if not use_reentrant:
            return function_(*args)
    return CheckpointFunction.apply(function_, preserve_rng_state, *args)


def checkpoint_sequential(functions, segments, input, use_reentrant=True, **kwargs):
    """Checkpoints a sequence of modules/functions in `segments` chunks (the last runs plainly)."""
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if hasattr(functions, "children") and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())
    functions = list(functions)

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)
