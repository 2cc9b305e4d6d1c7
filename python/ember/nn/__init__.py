"""ember.nn: neural-network building blocks (functional activations so far)."""

from ember.nn import functional  # noqa: F401
