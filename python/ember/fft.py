"""ember.fft: discrete Fourier transforms (as torch.fft)."""
