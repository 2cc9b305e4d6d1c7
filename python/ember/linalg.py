"""ember.linalg: PyTorch's torch.linalg on LAPACK (batched over leading dims)."""

from ember._C._linalg import *  # noqa: F401,F403
