"""Composable function transforms (PyTorch's ``torch.func`` / functorch 1.13).

The transforms run in C++ (``ember::func``, include/ember/func.h) over flat lists of tensors;
this module flattens and rebuilds the pytrees (tuples, lists, dicts, nested) that Python
functions take and return.
"""

import functools

from ember._C import _func as _F

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "vmap", "jacrev", "jacfwd", "hessian",
           "functional_call", "stack_module_state", "linearize"]


# ---------------------------------------------------------------------------------------------
# pytrees
# ---------------------------------------------------------------------------------------------

def _is_tensor(x):
    from ember import Tensor
    return isinstance(x, Tensor)


class _Spec:
    """Where the leaves of a flattened tree go: ('leaf',), or (kind, children[, keys])."""
    __slots__ = ("kind", "children", "keys", "ctor")

    def __init__(self, kind, children=(), keys=None, ctor=None):
        self.kind, self.children, self.keys, self.ctor = kind, children, keys, ctor

    @property
    def num_leaves(self):
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves for c in self.children)


def tree_flatten(tree):
    """(leaves, spec) of a pytree of tuples, lists and dicts."""
    if isinstance(tree, (tuple, list)):
        leaves, specs = [], []
        for x in tree:
            lv, sp = tree_flatten(x)
            leaves.extend(lv)
            specs.append(sp)
        kind = "list" if isinstance(tree, list) else "tuple"
        ctor = type(tree) if kind == "tuple" and type(tree) is not tuple else None
        return leaves, _Spec(kind, specs, ctor=ctor)
    if isinstance(tree, dict):
        leaves, specs = [], []
        keys = list(tree.keys())
        for k in keys:
            lv, sp = tree_flatten(tree[k])
            leaves.extend(lv)
            specs.append(sp)
        return leaves, _Spec("dict", specs, keys=keys, ctor=type(tree))
    return [tree], _Spec("leaf")


def tree_unflatten(leaves, spec):
    it = iter(leaves)

    def build(sp):
        if sp.kind == "leaf":
            return next(it)
        kids = [build(c) for c in sp.children]
        if sp.kind == "list":
            return kids
        if sp.kind == "dict":
            d = dict(zip(sp.keys, kids))
            return sp.ctor(d) if sp.ctor not in (None, dict) else d
        if sp.ctor is not None:
            return sp.ctor(*kids)  # a namedtuple
        return tuple(kids)

    return build(spec)


def _broadcast_prefix(prefix, spec, what):
    """Per-leaf values of `prefix`, a tree that is a prefix of `spec` (an int or None at a node
    applies to every leaf below)."""
    if prefix is None or isinstance(prefix, int):
        return [prefix] * spec.num_leaves
    if spec.kind == "leaf":
        raise ValueError(f"{what}: expected an int or None for a leaf, got {type(prefix).__name__}")
    if spec.kind in ("list", "tuple"):
        if not isinstance(prefix, (list, tuple)) or len(prefix) != len(spec.children):
            raise ValueError(f"{what}: its structure does not match the inputs "
                             f"(expected a sequence of {len(spec.children)} entries)")
        out = []
        for p, c in zip(prefix, spec.children):
            out.extend(_broadcast_prefix(p, c, what))
        return out
    if not isinstance(prefix, dict) or set(prefix.keys()) != set(spec.keys):
        raise ValueError(f"{what}: its structure does not match the inputs (expected a dict "
                         f"with keys {spec.keys})")
    out = []
    for k, c in zip(spec.keys, spec.children):
        out.extend(_broadcast_prefix(prefix[k], c, what))
    return out


class _Flat:
    """Positional arguments split into tensor leaves (passed through C++) and the rest."""

    def __init__(self, args):
        self.leaves, self.spec = tree_flatten(tuple(args))
        self.tensor_idx = [i for i, x in enumerate(self.leaves) if _is_tensor(x)]

    def tensors(self):
        return [self.leaves[i] for i in self.tensor_idx]

    def rebuild(self, tensors):
        leaves = list(self.leaves)
        for i, t in zip(self.tensor_idx, tensors):
            leaves[i] = t
        return tree_unflatten(leaves, self.spec)

    def arg_leaf_range(self, argnum):
        """Indices into tensors() of the leaves of positional argument `argnum`."""
        start = sum(c.num_leaves for c in self.spec.children[:argnum])
        stop = start + self.spec.children[argnum].num_leaves
        return [k for k, i in enumerate(self.tensor_idx) if start <= i < stop]


def _norm_argnums(argnums, nargs, fn):
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    if not nums:
        raise ValueError(f"{fn}: argnums must be non-empty")
    out = []
    for a in nums:
        if not isinstance(a, int):
            raise RuntimeError(f"{fn}: argnums must be int or Tuple[int, ...], got {type(a)}")
        if not -nargs <= a < nargs:
            raise RuntimeError(f"{fn}: Got argnums={a}, but only {nargs} positional inputs")
        out.append(a % nargs)
    if len(set(out)) != len(out):
        raise RuntimeError(f"{fn}: argnums must be unique, got {argnums}")
    return single, out


def _out_tensors(out, fn):
    leaves, spec = tree_flatten(out)
    for x in leaves:
        if not _is_tensor(x):
            raise ValueError(f"{fn}: the function must return tensors (or tuples, lists, dicts of "
                             f"them), got {type(x).__name__}")
    return leaves, spec


# ---------------------------------------------------------------------------------------------
# vmap
# ---------------------------------------------------------------------------------------------

def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Vectorizes `func` over a batch dim of its inputs (``torch.vmap``)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. "
                         f"(got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        if not isinstance(in_dims, (int, tuple)) and in_dims is not None:
            raise ValueError(f"vmap(in_dims={in_dims!r}): expected `in_dims` to be int or a "
                             f"(potentially nested) tuple matching the structure of inputs, got: "
                             f"{type(in_dims)}.")
        if not args:
            raise ValueError("vmap: got no inputs. Maybe you forgot to add inputs, or you are "
                             "trying to vmap over a function with no inputs. The latter is "
                             "unsupported.")
        flat = _Flat(args)
        if isinstance(in_dims, tuple) and len(in_dims) != len(args):
            raise ValueError(f"vmap(in_dims={in_dims!r}, ...)(<inputs>): in_dims is not "
                             f"compatible with the structure of `inputs`. in_dims has structure "
                             f"of {len(in_dims)} entries but inputs has {len(args)}.")
        per_leaf = _broadcast_prefix(in_dims, flat.spec, f"vmap(in_dims={in_dims!r})")
        for i, x in enumerate(flat.leaves):
            if per_leaf[i] is not None and not _is_tensor(x):
                raise ValueError(f"vmap(in_dims={in_dims!r}): Got in_dim={per_leaf[i]} for an "
                                 f"input but the input is of type {type(x)}. We cannot vmap over "
                                 f"non-Tensor arguments, please use None as the respective "
                                 f"in_dim")
        tdims = [per_leaf[i] for i in flat.tensor_idx]
        if all(d is None for d in tdims):
            raise ValueError(f"vmap(in_dims={in_dims!r}): at least one input must be batched "
                             f"(every in_dim is None)")
        out_spec = []

        def inner(ts):
            out = func(*flat.rebuild(ts), **kwargs)
            leaves, spec = _out_tensors(out, "vmap")
            out_spec.append(spec)
            return leaves

        def out_dims_of(n):
            return _broadcast_prefix(out_dims, out_spec[-1], f"vmap(out_dims={out_dims!r})")

        od = None if isinstance(out_dims, int) and out_dims == 0 else out_dims_of
        res = _F.vmap(inner, flat.tensors(), tdims, od, randomness, chunk_size)
        return tree_unflatten(res, out_spec[-1])

    return wrapped


# ---------------------------------------------------------------------------------------------
# grad, vjp, jvp
# ---------------------------------------------------------------------------------------------

def _grad_impl(func, argnums, has_aux, args, kwargs, fn):
    single, nums = _norm_argnums(argnums, len(args), fn)
    flat = _Flat(args)
    ranges = [flat.arg_leaf_range(a) for a in nums]
    for a, r in zip(nums, ranges):
        if not r:
            raise RuntimeError(f"{fn}: argument {a} has no tensors to differentiate")
    leaf_nums = [k for r in ranges for k in r]
    aux_spec = []

    def inner(ts):
        out = func(*flat.rebuild(ts), **kwargs)
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError(f"{fn}(f)(*args): output of function f should be a tuple: "
                                   f"(output, aux) if has_aux is True")
            out, aux = out
            if not _is_tensor(out):
                raise RuntimeError(f"{fn}(f)(*args): Expected f(*args) to return a Tensor, got "
                                   f"{type(out)}")
            leaves, spec = tree_flatten(aux)
            aux_spec.append((leaves, spec))
            return [out] + [x for x in leaves if _is_tensor(x)]
        if not _is_tensor(out):
            raise RuntimeError(f"{fn}(f)(*args): Expected f(*args) to return a Tensor, got "
                               f"{type(out)}")
        return [out]

    grads, outs = _F.grad_and_value(inner, flat.tensors(), leaf_nums)
    # Gradients back into the structure of each differentiated argument.
    per_arg, pos = [], 0
    for a, r in zip(nums, ranges):
        sub_leaves, sub_spec = tree_flatten(args[a])
        g = list(sub_leaves)
        tens = [i for i, x in enumerate(sub_leaves) if _is_tensor(x)]
        for i in tens:
            g[i] = grads[pos]
            pos += 1
        per_arg.append(tree_unflatten(g, sub_spec))
    g = per_arg[0] if single else tuple(per_arg)
    value = outs[0]
    if has_aux:
        leaves, spec = aux_spec[-1]
        it = iter(outs[1:])
        aux = tree_unflatten([next(it) if _is_tensor(x) else x for x in leaves], spec)
        return g, (value, aux)
    return g, value


def grad_and_value(func, argnums=0, has_aux=False):
    """Returns a function computing (gradients, value) of `func` (``torch.func.grad_and_value``)."""
    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return _grad_impl(func, argnums, has_aux, args, kwargs, "grad_and_value")
    return wrapped


def grad(func, argnums=0, has_aux=False):
    """Returns a function computing the gradient of scalar `func` (``torch.func.grad``)."""
    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        g, v = _grad_impl(func, argnums, has_aux, args, kwargs, "grad")
        return (g, v[1]) if has_aux else g
    return wrapped


def vjp(func, *primals, has_aux=False):
    """(outputs, vjp_fn) of `func` at `primals` (``torch.func.vjp``)."""
    flat = _Flat(primals)
    out_spec, aux_box = [], []

    def inner(ts):
        out = func(*flat.rebuild(ts))
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: "
                                   "(output, aux) if has_aux is True")
            out, aux = out
            aux_box.append(aux)
        leaves, spec = _out_tensors(out, "vjp")
        out_spec.append(spec)
        return leaves

    outs, fn = _F.vjp(inner, flat.tensors())
    spec = out_spec[-1]

    def vjp_fn(*cotangents):
        ct = cotangents[0] if len(cotangents) == 1 else cotangents
        leaves, cspec = tree_flatten(ct)
        if len(leaves) != len(outs):
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as "
                               f"pytree structure of outputs to the function. cotangents: "
                               f"{len(leaves)} leaves, primal output: {len(outs)} leaves")
        grads = fn(leaves)
        res = []
        it = iter(grads)
        for x in flat.leaves:
            res.append(next(it) if _is_tensor(x) else None)
        return tree_unflatten(res, flat.spec)

    result = tree_unflatten(outs, spec)
    if has_aux:
        return result, vjp_fn, aux_box[-1]
    return result, vjp_fn


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(outputs, output tangents) of `func` at `primals` along `tangents` (``torch.func.jvp``)."""
    if not isinstance(primals, tuple):
        raise RuntimeError(f"jvp(f, primals, tangents): Expected primals to be a tuple. "
                           f"E.g. it should be valid to call f(*primals). Got {type(primals)}")
    if not isinstance(tangents, tuple) or len(tangents) != len(primals):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the "
                           "same python structure. For example, if primals is a tuple of 3 "
                           "tensors, tangents also must be.")
    flat = _Flat(primals)
    tl, _ = tree_flatten(tangents)
    if len(tl) != len(flat.leaves):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the "
                           "same python structure.")
    tans = [tl[i] for i in flat.tensor_idx]
    out_spec, aux_box = [], []

    def inner(ts):
        out = func(*flat.rebuild(ts))
        if has_aux:
            out, aux = out
            aux_box.append(aux)
        leaves, spec = _out_tensors(out, "jvp")
        out_spec.append(spec)
        return leaves

    outs, touts = _F.jvp(inner, flat.tensors(), tans)
    r = (tree_unflatten(outs, out_spec[-1]), tree_unflatten(touts, out_spec[-1]))
    return r + (aux_box[-1],) if has_aux else r


def linearize(func, *primals):
    """(output, jvp_fn): the output at `primals` and a function of tangents."""
    out = func(*primals)

    def jvp_fn(*tangents):
        return jvp(func, primals, tangents)[1]
    return out, jvp_fn


# ---------------------------------------------------------------------------------------------
# Jacobians
# ---------------------------------------------------------------------------------------------

def _jac(kind, func, argnums, has_aux, args, kwargs):
    single, nums = _norm_argnums(argnums, len(args), kind)
    flat = _Flat(args)
    ranges = [flat.arg_leaf_range(a) for a in nums]
    leaf_nums = [k for r in ranges for k in r]
    out_spec, aux_box = [], []

    def inner(ts):
        out = func(*flat.rebuild(ts), **kwargs)
        if has_aux:
            out, aux = out
            aux_box.append(aux)
        leaves, spec = _out_tensors(out, kind)
        out_spec.append(spec)
        return leaves

    fn = _F.jacrev if kind == "jacrev" else _F.jacfwd
    jac = fn(inner, flat.tensors(), leaf_nums)
    n_in = len(leaf_nums)
    spec = out_spec[-1]

    def per_output(o):
        row = jac[o * n_in:(o + 1) * n_in]
        per_arg, pos = [], 0
        for a in nums:
            sub_leaves, sub_spec = tree_flatten(args[a])
            g = list(sub_leaves)
            for i, x in enumerate(sub_leaves):
                if _is_tensor(x):
                    g[i] = row[pos]
                    pos += 1
            per_arg.append(tree_unflatten(g, sub_spec))
        return per_arg[0] if single else tuple(per_arg)

    res = tree_unflatten([per_output(o) for o in range(spec.num_leaves)], spec)
    return (res, aux_box[-1]) if has_aux else res


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of `func` in reverse mode (``torch.func.jacrev``)."""
    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return _jac("jacrev", func, argnums, has_aux, args, kwargs)
    return wrapped


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of `func` in forward mode (``torch.func.jacfwd``)."""
    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return _jac("jacfwd", func, argnums, has_aux, args, kwargs)
    return wrapped


def hessian(func, argnums=0):
    """``jacfwd(jacrev(func, argnums), argnums)`` (``torch.func.hessian``)."""
    return jacfwd(jacrev(func, argnums), argnums)


# ---------------------------------------------------------------------------------------------
# Modules
# ---------------------------------------------------------------------------------------------

def _named_slot(module, name):
    *path, leaf = name.split(".")
    m = module
    for p in path:
        m = getattr(m, p)
    return m, leaf


def functional_call(module, parameters_and_buffers, args, kwargs=None, *, tie_weights=True,
                    strict=False):
    """Calls `module` with its parameters and buffers replaced by the given tensors (named by
    their state_dict names); the module is left as it was (``torch.func.functional_call``)."""
    if isinstance(parameters_and_buffers, (list, tuple)):
        merged = {}
        for d in parameters_and_buffers:
            for k, v in d.items():
                if k in merged:
                    raise ValueError(f"{k} appeared in multiple dictionaries; behavior of "
                                     f"functional call is ambiguous")
                merged[k] = v
        parameters_and_buffers = merged
    if kwargs is None:
        kwargs = {}
    if not isinstance(args, tuple):
        args = (args,)
    saved = []
    try:
        for name, value in parameters_and_buffers.items():
            owner, leaf = _named_slot(module, name)
            if leaf in owner._parameters:
                saved.append((owner._parameters, leaf, owner._parameters[leaf]))
                owner._parameters[leaf] = value
            elif leaf in owner._buffers:
                saved.append((owner._buffers, leaf, owner._buffers[leaf]))
                owner._buffers[leaf] = value
            elif strict:
                raise RuntimeError(f"Unexpected key(s): '{name}'.")
            else:
                saved.append((owner.__dict__, leaf, owner.__dict__.get(leaf, _MISSING)))
                owner.__dict__[leaf] = value
        return module(*args, **kwargs)
    finally:
        for d, k, v in reversed(saved):
            if v is _MISSING:
                d.pop(k, None)
            else:
                d[k] = v


_MISSING = object()


def stack_module_state(models):
    """(params, buffers): each parameter and buffer of `models` stacked along a new dim 0, for
    ensembling with vmap and functional_call (``torch.func.stack_module_state``)."""
    import ember
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/"
                           "eval mode.")
    t0 = type(models[0])
    if not all(type(m) is t0 for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = {k: ember.stack([dict(m.named_parameters())[k].detach() for m in models])
              for k, _ in models[0].named_parameters()}
    for v in params.values():
        v.requires_grad_()
    buffers = {k: ember.stack([dict(m.named_buffers())[k] for m in models])
               for k, _ in models[0].named_buffers()}
    return params, buffers
