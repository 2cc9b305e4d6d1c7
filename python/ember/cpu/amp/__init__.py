"""ember.cpu.amp: autocast for CPU (bfloat16 by default)."""

from ember.cpu.amp.autocast_mode import autocast  # noqa: F401
