"""ember.special: special functions (as torch.special)."""

from ember import _C

_S = _C._special

expit = _C.sigmoid
erf = _C.erf
erfc = _C.erfc
erfinv = _C.erfinv
exp2 = _C.exp2
expm1 = _C.expm1
log1p = _C.log1p
logit = _C.logit
xlogy = _C.xlogy
round = _C.round
gammaln = _C.lgamma
digamma = _C.digamma
psi = _C.digamma
polygamma = _C.polygamma
logsumexp = _C.logsumexp
gammainc = _C.igamma
gammaincc = _C.igammac
i0 = _C.i0
sinc = _C.sinc

# Defined in _C._special: this area's functions, and the Bessel, error-function and
# normal-distribution family (read when present, so the module imports without them).
_FROM_SPECIAL = (
    "entr xlog1py zeta chebyshev_polynomial_t chebyshev_polynomial_u chebyshev_polynomial_v "
    "chebyshev_polynomial_w shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u "
    "shifted_chebyshev_polynomial_v shifted_chebyshev_polynomial_w hermite_polynomial_h "
    "hermite_polynomial_he laguerre_polynomial_l legendre_polynomial_p "
    "i0e i1 i1e ndtr ndtri log_ndtr erfcx bessel_j0 bessel_j1 bessel_y0 bessel_y1 "
    "modified_bessel_i0 modified_bessel_i1 modified_bessel_k0 modified_bessel_k1 "
    "scaled_modified_bessel_k0 scaled_modified_bessel_k1 spherical_bessel_j0 airy_ai").split()
for _name in _FROM_SPECIAL:
    if hasattr(_S, _name):
        globals()[_name] = getattr(_S, _name)
del _name


def multigammaln(input, p, *, out=None):
    """torch.special.multigammaln: log of the multivariate gamma function of dimension p."""
    return _C.mvlgamma(input, p, out=out)


def softmax(input, dim, dtype=None):
    """torch.special.softmax: no out= (unlike torch.softmax)."""
    return _C.softmax(input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    """torch.special.log_softmax: no out= (unlike torch.log_softmax)."""
    return _C.log_softmax(input, dim, dtype)


from ember._arg_types import check_public_functions as _check_public_functions  # noqa: E402

_check_public_functions(globals(), "ember.special")
del _check_public_functions
