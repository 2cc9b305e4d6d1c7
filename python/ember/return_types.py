"""Named result tuples of multi-output ops, shaped like torch.return_types (`values, indices =
ember.max(x, 1)` or `ember.max(x, 1).values`); the repr matches PyTorch's."""



def _make(name, fields):
    class _Result(tuple):
        __slots__ = ()
        n_fields = n_sequence_fields = len(fields)
        n_unnamed_fields = 0

        def __new__(cls, seq):
            seq = tuple(seq)
            if len(seq) != len(fields):
                raise TypeError(f"ember.return_types.{name} takes a {len(fields)}-sequence "
                                f"({len(seq)}-sequence given)")
            return tuple.__new__(cls, seq)

        def __repr__(self):
            body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
            return f"ember.return_types.{name}(\n{body})"

        def __reduce__(self):
            return (type(self), (tuple(self),))

    for i, f in enumerate(fields):
        setattr(_Result, f, property(lambda self, i=i: self[i]))
    _Result.__name__ = _Result.__qualname__ = name
    _Result.__module__ = "ember.return_types"
    return _Result


_FIELDS = {
    "max": ("values", "indices"), "min": ("values", "indices"), "sort": ("values", "indices"),
    "topk": ("values", "indices"), "kthvalue": ("values", "indices"),
    "median": ("values", "indices"), "nanmedian": ("values", "indices"),
    "mode": ("values", "indices"), "cummax": ("values", "indices"),
    "cummin": ("values", "indices"), "aminmax": ("min", "max"),
    "frexp": ("mantissa", "exponent"), "histogram": ("hist", "bin_edges"),
    "histogramdd": ("hist", "bin_edges"),
    "slogdet": ("sign", "logabsdet"), "linalg_slogdet": ("sign", "logabsdet"),
    "qr": ("Q", "R"), "linalg_qr": ("Q", "R"), "svd": ("U", "S", "V"),
    "linalg_svd": ("U", "S", "Vh"), "linalg_eig": ("eigenvalues", "eigenvectors"),
    "linalg_eigh": ("eigenvalues", "eigenvectors"),
    "linalg_inv_ex": ("inverse", "info"), "linalg_cholesky_ex": ("L", "info"),
    "linalg_solve_ex": ("result", "info"),
    "linalg_lstsq": ("solution", "residuals", "rank", "singular_values"),
    "linalg_lu": ("P", "L", "U"), "linalg_lu_factor": ("LU", "pivots"),
    "linalg_lu_factor_ex": ("LU", "pivots", "info"), "lu_unpack": ("P", "L", "U"),
    "triangular_solve": ("solution", "cloned_coefficient"), "geqrf": ("a", "tau"),
    "linalg_ldl_factor": ("LD", "pivots"), "linalg_ldl_factor_ex": ("LD", "pivots", "info"),
    "symeig": ("eigenvalues", "eigenvectors"), "_lu_with_info": ("LU", "pivots", "info"),
}
for _name, _f in _FIELDS.items():
    globals()[_name] = _make(_name, _f)
del _name, _f
