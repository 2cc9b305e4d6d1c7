"""ember.special: special functions (as torch.special)."""

from ember import _C

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
