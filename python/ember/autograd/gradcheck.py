"""Finite-difference checks of gradients (torch.autograd.gradcheck / gradgradcheck).

The analytical Jacobian (one vjp per output element, or one jvp per input element with
check_forward_ad) is compared with central differences. Complex inputs use the
conjugate-Wirtinger convention of PyTorch (the gradient of a real function is
df/dx + 1j * df/dy); complex outputs are checked through their real and imaginary parts.
"""

import warnings

import numpy as np

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck and gradgradcheck when a check fails."""


def _is_tensor(x):
    import ember
    return isinstance(x, ember.Tensor)


def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _np(t):
    return np.array(t.detach().resolve_conj().numpy())


def _differentiable(t):
    return _is_tensor(t) and (t.is_floating_point() or t.is_complex())


class _Checker:
    def __init__(self, func, inputs, eps, atol, rtol, raise_exception, nondet_tol,
                 check_grad_dtypes, prefix=""):
        self.func = func
        self.inputs = inputs
        self.eps = eps
        self.atol = atol
        self.rtol = rtol
        self.raise_exception = raise_exception
        self.nondet_tol = nondet_tol
        self.check_grad_dtypes = check_grad_dtypes
        self.prefix = prefix
        self.diff = [i for i, x in enumerate(inputs) if _is_tensor(x) and x.requires_grad]

    def outputs(self, inputs=None):
        return _as_tuple(self.func(*(self.inputs if inputs is None else inputs)))

    def fail(self, msg):
        raise GradcheckError(self.prefix + msg)

    # ---- numerical ----
    def numerical(self):
        """[input][output] -> (numel_in, numel_out) central differences."""
        import ember
        outs0 = self.outputs()
        result = []
        for i in self.diff:
            x = self.inputs[i]
            data = x.data
            n = x.numel()
            cplx = x.is_complex()
            base = _np(x).reshape(-1)
            per_out = [np.zeros((n, o.numel() if _differentiable(o) else 0),
                                dtype=np.complex128 if cplx else np.float64) for o in outs0]

            def eval_at(idx, v):
                with ember.no_grad():
                    if x.dim() == 0:
                        data.fill_(v)
                    else:
                        data[idx] = v
                outs = self.outputs()
                return [(_np(o).reshape(-1) if _differentiable(o) else None) for o in outs]

            for k in range(n):
                idx = tuple(int(j) for j in np.unravel_index(k, tuple(x.shape)))
                orig = base[k]
                try:
                    plus = eval_at(idx, orig + self.eps)
                    minus = eval_at(idx, orig - self.eps)
                    if cplx:
                        plus_i = eval_at(idx, orig + self.eps * 1j)
                        minus_i = eval_at(idx, orig - self.eps * 1j)
                finally:
                    eval_at(idx, orig)
                for o in range(len(outs0)):
                    if plus[o] is None:
                        continue
                    d = (plus[o] - minus[o]) / (2 * self.eps)
                    if cplx:
                        d = d + 1j * (plus_i[o] - minus_i[o]) / (2 * self.eps)
                    per_out[o][k, :] = d
            result.append(per_out)
        return result

    # ---- analytical, reverse mode ----
    def analytical(self):
        import ember
        outs = self.outputs()
        inputs = [self.inputs[i] for i in self.diff]
        result = [[np.zeros((x.numel(), o.numel() if _differentiable(o) else 0),
                            dtype=np.complex128 if x.is_complex() else np.float64)
                   for o in outs] for x in inputs]
        for oi, o in enumerate(outs):
            if not _differentiable(o) or not o.requires_grad:
                continue
            m = o.numel()
            for k in range(m):
                g = np.zeros(m, dtype=np.float64)
                g[k] = 1.0
                go = ember.tensor(g.reshape(tuple(o.shape)), dtype=o.dtype)
                grads = ember.autograd.grad((o,), inputs, (go,), retain_graph=True,
                                            allow_unused=True)
                for ii, (x, gx) in enumerate(zip(inputs, grads)):
                    if gx is None:
                        continue
                    if tuple(gx.shape) != tuple(x.shape):
                        self.fail(f"Gradient has incorrect size for input {ii}: got "
                                  f"{tuple(gx.shape)}, expected {tuple(x.shape)}")
                    if self.check_grad_dtypes and gx.dtype != x.dtype:
                        self.fail(f"Gradient has dtype mismatch for input {ii}: got {gx.dtype}, "
                                  f"expected {x.dtype}")
                    result[ii][oi][:, k] = _np(gx).reshape(-1)
        return result

    # ---- analytical, forward mode ----
    def forward_jacobian(self):
        import ember
        from ember.autograd import forward_ad as fwAD
        outs0 = self.outputs()
        result = []
        for i in self.diff:
            x = self.inputs[i]
            n = x.numel()
            cplx = x.is_complex()
            per_out = [np.zeros((n, o.numel() if _differentiable(o) else 0),
                                dtype=np.complex128 if cplx else np.float64) for o in outs0]

            def jvp(tangent):
                with fwAD.dual_level():
                    args = list(self.inputs)
                    args[i] = fwAD.make_dual(x.detach(), tangent)
                    outs = self.outputs(args)
                    res = []
                    for o in outs:
                        if not _differentiable(o):
                            res.append(None)
                            continue
                        t = fwAD.unpack_dual(o).tangent
                        res.append(np.zeros(o.numel()) if t is None else _np(t).reshape(-1))
                    return res

            for k in range(n):
                t = np.zeros(n, dtype=np.complex128 if cplx else np.float64)
                t[k] = 1.0
                dx = jvp(ember.tensor(t.reshape(tuple(x.shape)), dtype=x.dtype))
                if cplx:
                    dy = jvp(ember.tensor((1j * t).reshape(tuple(x.shape)), dtype=x.dtype))
                for o in range(len(outs0)):
                    if dx[o] is None:
                        continue
                    d = dx[o]
                    if cplx:
                        d = d + 1j * dy[o]
                    per_out[o][k, :] = d
            result.append(per_out)
        return result

    def compare(self, analytical, numerical, what):
        for ii, (a_in, n_in) in enumerate(zip(analytical, numerical)):
            for oi, (a, n) in enumerate(zip(a_in, n_in)):
                if a.size == 0 and n.size == 0:
                    continue
                if not np.allclose(a, n, rtol=self.rtol, atol=self.atol):
                    self.fail(f"{what} mismatch for output {oi} with respect to input {ii},\n"
                              f"numerical:{n}\nanalytical:{a}\n")

    def check_zero_numerical(self, numerical):
        outs = self.outputs()
        for n_in in numerical:
            for oi, n in enumerate(n_in):
                o = outs[oi]
                if _differentiable(o) and not o.requires_grad and n.size and \
                        not np.allclose(n, 0, rtol=self.rtol, atol=self.atol):
                    self.fail("Numerical gradient for function expected to be zero")

    def run(self, check_forward_ad, check_backward_ad):
        numerical = self.numerical()
        self.check_zero_numerical(numerical)
        if check_backward_ad:
            a1 = self.analytical()
            self.compare(a1, numerical, "Jacobian")
            a2 = self.analytical()
            for x1, x2 in zip(a1, a2):
                for m1, m2 in zip(x1, x2):
                    if m1.size and not np.allclose(m1, m2, rtol=0, atol=self.nondet_tol):
                        self.fail("Backward is not reentrant, i.e., running backward with same "
                                  "input and grad_output multiple times gives different values, "
                                  "although analytical gradient matches numerical gradient.The "
                                  f"tolerance for nondeterminism was {self.nondet_tol}.")
        if check_forward_ad:
            self.compare(self.forward_jacobian(), numerical,
                         "Jacobian computed with forward mode")


def _real_and_imag_output(fn):
    def apply(part):
        def wrapped(*inputs):
            outs = _as_tuple(fn(*inputs))
            return tuple(getattr(o, part) if _is_tensor(o) and o.is_complex() else o
                         for o in outs)
        return wrapped
    return apply("real"), apply("imag")


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              check_sparse_nnz=False, nondet_tol=0.0, check_undefined_grad=True,
              check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False):
    """Checks the gradients of `func` at `inputs` (the tensors with requires_grad) against
    central finite differences. Returns True, or raises GradcheckError (returns False when
    raise_exception is False). Use float64/complex128 inputs."""
    if check_sparse_nnz:
        raise NotImplementedError("gradcheck: check_sparse_nnz is not supported (no sparse "
                                  "tensors)")
    if check_batched_grad or check_batched_forward_grad:
        raise NotImplementedError("gradcheck: check_batched_grad is not supported")
    tupled = _as_tuple(inputs)
    if not any(_is_tensor(x) and x.requires_grad for x in tupled):
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of the them have requires_grad=True.")
    import ember
    for i, x in enumerate(tupled):
        if _is_tensor(x) and x.requires_grad and x.dtype not in (ember.float64, ember.complex128):
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating "
                          "point or complex. This check will likely fail if all the inputs are "
                          "not of double precision floating point or complex. ")
    outs = _as_tuple(func(*tupled))
    if not any(_is_tensor(o) for o in outs):
        raise ValueError("gradcheck: the function returned no Tensor")
    try:
        if any(_is_tensor(o) and o.is_complex() for o in outs):
            real_fn, imag_fn = _real_and_imag_output(func)
            for fn, part in ((real_fn, "real"), (imag_fn, "imaginary")):
                _Checker(fn, tupled, eps, atol, rtol, raise_exception, nondet_tol,
                         check_grad_dtypes,
                         f"While considering the {part} part of complex outputs only, ").run(
                    check_forward_ad, check_backward_ad)
        else:
            _Checker(func, tupled, eps, atol, rtol, raise_exception, nondet_tol,
                     check_grad_dtypes).run(check_forward_ad, check_backward_ad)
        if check_undefined_grad and check_backward_ad:
            _check_undefined_grad(func, tupled)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _check_undefined_grad(func, inputs):
    """Backward must accept outputs that received no gradient (treated as zeros)."""
    import ember
    outs = [o for o in _as_tuple(func(*inputs)) if _is_tensor(o) and o.requires_grad]
    diff = [x for x in inputs if _is_tensor(x) and x.requires_grad]
    if len(outs) < 2:
        return
    # Only the first output gets a gradient: the others are undefined in the node.
    try:
        ember.autograd.grad(outs[:1], diff, allow_unused=True,
                            grad_outputs=[ember.zeros_like(outs[0])])
    except RuntimeError as e:
        raise GradcheckError("Expected backward function to handle undefined output grads. "
                             "Please look at \"Notes about undefined output gradients\" in "
                             "\"tools/autograd/derivatives.yaml\"") from e


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False):
    """gradcheck of the vjp of `func` (second derivatives), with random grad_outputs that
    require grad unless given."""
    import ember
    tupled = _as_tuple(inputs)
    if grad_outputs is None:
        outs = _as_tuple(func(*tupled))
        gen = ember.Generator().manual_seed(0)
        grad_outputs = []
        for o in outs:
            if not (_is_tensor(o) and o.requires_grad):
                continue
            g = ember.randn(tuple(o.shape), dtype=o.dtype, generator=gen)
            if gen_non_contig_grad_outputs and o.dim() > 0:
                g = ember.randn(tuple(o.shape) + (2,), dtype=o.dtype, generator=gen)[..., 0]
            grad_outputs.append(g.requires_grad_(True))
        grad_outputs = tuple(grad_outputs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n = len(tupled)

    def new_func(*args):
        inp, gos = args[:n], args[n:]
        outs = [o for o in _as_tuple(func(*inp)) if _is_tensor(o) and o.requires_grad]
        diff = [x for x in inp if _is_tensor(x) and x.requires_grad]
        grads = ember.autograd.grad(outs, diff, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(new_func, tupled + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev)
