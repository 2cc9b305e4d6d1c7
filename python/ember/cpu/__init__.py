"""ember.cpu: CPU-specific helpers (ember.cpu.amp)."""

from ember.cpu import amp  # noqa: F401
