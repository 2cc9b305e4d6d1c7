"""``torch.autograd.functional``: jacobian, hessian, vjp, jvp, hvp and vhp, built on the
function transforms of ember.func (one implementation of each derivative)."""

from ember import func as _func

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _as_tuple(x):
    return (x, False) if isinstance(x, tuple) else ((x,), True)


def _detach(x, create_graph):
    if create_graph:
        return x
    if isinstance(x, tuple):
        return tuple(_detach(v, create_graph) for v in x)
    return x.detach() if x is not None else None


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J)."""
    ins, single = _as_tuple(inputs)
    out, fn = _func.vjp(func, *ins)
    if v is None:
        if out.numel() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function "
                               "returns a single Tensor with a single element.")
        import ember
        v = ember.ones_like(out)
    g = fn(v)
    return _detach(out, create_graph), _detach(g[0] if single else g, create_graph)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v)."""
    ins, single = _as_tuple(inputs)
    if v is None:
        if not (len(ins) == 1 and ins[0].numel() == 1):
            raise RuntimeError("The vector v can only be None if the input to the user-provided "
                               "function is a single Tensor with a single element.")
        import ember
        v = ember.ones_like(ins[0])
    vs, _ = _as_tuple(v)
    out, t = _func.jvp(func, ins, vs)
    return _detach(out, create_graph), _detach(t, create_graph)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of `func` at `inputs`: a tensor, or tuples (outputs x inputs)."""
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    ins, single = _as_tuple(inputs)
    jac = _func.jacrev if strategy == "reverse-mode" else _func.jacfwd
    argnums = 0 if single else tuple(range(len(ins)))
    j = jac(func, argnums=argnums)(*ins)
    return _detach(j, create_graph)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of scalar `func` at `inputs`: a tensor, or a tuple of tuples."""
    ins, single = _as_tuple(inputs)
    argnums = 0 if single else tuple(range(len(ins)))
    return _detach(_func.hessian(func, argnums=argnums)(*ins), create_graph)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v), as forward-over-reverse."""
    ins, single = _as_tuple(inputs)
    vs, _ = _as_tuple(v)
    argnums = 0 if single else tuple(range(len(ins)))
    g = _func.grad(func, argnums=argnums)
    _, hv = _func.jvp(g, ins, vs)
    return _detach(func(*ins), create_graph), _detach(hv, create_graph)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H), as reverse-over-reverse."""
    ins, single = _as_tuple(inputs)
    vs, _ = _as_tuple(v)
    argnums = 0 if single else tuple(range(len(ins)))
    _, fn = _func.vjp(_func.grad(func, argnums=argnums), *ins)
    r = fn(vs[0] if single else vs)
    return _detach(func(*ins), create_graph), _detach(r[0] if single else r, create_graph)
