"""ember.backends: the flags of torch.backends, reporting what this build of ember really uses.

ember computes on the CPU with OpenMP threads, OpenBLAS and oneDNN (mkldnn); it has no MKL, MPS
or cuDNN path. Flags that only steer a backend ember lacks are kept so scripts can set them, and
have no effect.
"""

import contextlib
import sys
import types

from ember import _C


def _module(name, doc):
    mod = types.ModuleType(f"{__name__}.{name}", doc)
    sys.modules[mod.__name__] = mod
    globals()[name] = mod
    return mod


# ---- cudnn ----
cudnn = _module("cudnn", "cuDNN flags (ember's CUDA convolutions run on cuDNN).")
cudnn.enabled = True
cudnn.benchmark = False
cudnn.deterministic = False
cudnn.allow_tf32 = True
cudnn.benchmark_limit = 10
cudnn.is_available = lambda: __import__("ember").cuda.is_available()
cudnn.version = lambda: None
cudnn.is_acceptable = lambda tensor: bool(tensor.is_cuda)


@contextlib.contextmanager
def _cudnn_flags(enabled=False, benchmark=False, deterministic=False, allow_tf32=True):
    saved = (cudnn.enabled, cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32)
    cudnn.enabled, cudnn.benchmark = enabled, benchmark
    cudnn.deterministic, cudnn.allow_tf32 = deterministic, allow_tf32
    try:
        yield
    finally:
        cudnn.enabled, cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32 = saved


cudnn.flags = _cudnn_flags

# ---- cuda ----
cuda = _module("cuda", "CUDA matmul flags.")
class _CudaMatmul:
    """torch.backends.cuda.matmul: allow_tf32 is float32 matmul precision != "highest"."""

    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True

    @property
    def allow_tf32(self):
        import ember
        return ember.get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value):
        import ember
        ember.set_float32_matmul_precision("high" if value else "highest")


cuda.matmul = _CudaMatmul()


def _cuda_built():
    # The CUDA backend is compiled in when nvcc was found at build time; the runtime query
    # raises "not built" otherwise.
    try:
        _C._cuda_device_count()
        return True
    except RuntimeError:
        return False


cuda.is_built = _cuda_built

# ---- mps ----
mps = _module("mps", "Apple's Metal backend: not part of ember.")
mps.is_available = lambda: False
mps.is_built = lambda: False

# ---- openmp ----
openmp = _module("openmp", "OpenMP: ember's intra-op thread pool.")
openmp.is_available = lambda: True

# ---- mkldnn (oneDNN) ----
mkldnn = _module("mkldnn", "oneDNN, which ember links for convolutions.")
mkldnn.is_available = lambda: True
mkldnn.enabled = True


@contextlib.contextmanager
def _mkldnn_flags(enabled=False):
    saved = mkldnn.enabled
    mkldnn.enabled = enabled
    try:
        yield
    finally:
        mkldnn.enabled = saved


mkldnn.flags = _mkldnn_flags

# ---- mkl ----
mkl = _module("mkl", "Intel MKL: ember uses OpenBLAS and LAPACK instead.")
mkl.is_available = lambda: False

# ---- cpu ----
cpu = _module("cpu", "CPU kernel selection.")
cpu.get_cpu_capability = lambda: _C._cpu_capability.upper()

# ---- opt_einsum ----
opt_einsum = _module("opt_einsum", "opt_einsum contraction ordering: not used by ember.")
opt_einsum.is_available = lambda: False
opt_einsum.enabled = False

__all__ = ["cudnn", "cuda", "mps", "openmp", "mkldnn", "mkl", "cpu", "opt_einsum"]
