"""ember.nn.utils: gradient clipping, parameter/vector conversion, packed sequences."""

from ember.nn.utils import rnn  # noqa: F401
from ember.nn.utils.clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_  # noqa
from ember.nn.utils.convert_parameters import (parameters_to_vector,  # noqa: F401
                                               vector_to_parameters)
