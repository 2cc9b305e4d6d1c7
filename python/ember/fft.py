"""ember.fft: discrete Fourier transforms (as torch.fft).

The functions live in ``ember._C._fft``; each takes ``norm`` ("backward", "ortho", "forward"
or None) and an ``out=`` keyword (an empty out tensor is resized to the result).
"""

from ember._C._fft import (  # noqa: F401
    fft, ifft, rfft, irfft, hfft, ihfft,
    fft2, ifft2, rfft2, irfft2, hfft2, ihfft2,
    fftn, ifftn, rfftn, irfftn, hfftn, ihfftn,
    fftfreq, rfftfreq, fftshift, ifftshift,
)

__all__ = [
    "fft", "ifft", "rfft", "irfft", "hfft", "ihfft",
    "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
    "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn",
    "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]
