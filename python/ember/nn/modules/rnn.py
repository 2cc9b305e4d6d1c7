"""RNN, LSTM, GRU and their cells (torch.nn.modules.rnn) over ember._C._nn's recurrent ops.

Parameter names, their order in `_flat_weights` and their initialisation are torch's. The
forward pass of the layers (padded, unbatched or PackedSequence input) is the C++ one.
"""

import math
import numbers
import warnings

import ember
from ember import _C
from ember.nn import init
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter
from ember.nn.utils.rnn import PackedSequence

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_nn = _C._nn


def _apply_permutation(tensor, permutation, dim=1):
    return tensor.index_select(dim, permutation)


class RNNBase(Module):
    """The shared parameters, checks and repr of RNN, LSTM and GRU."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first",
                     "dropout", "bidirectional", "proj_size"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0, device=None,
                 dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or \
                isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        gate_size = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}.get(mode)
        if gate_size is None:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size *= hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                real_hidden_size = proj_size if proj_size > 0 else hidden_size
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                w_ih = Parameter(ember.empty((gate_size, layer_input_size), **factory_kwargs))
                w_hh = Parameter(ember.empty((gate_size, real_hidden_size), **factory_kwargs))
                b_ih = Parameter(ember.empty(gate_size, **factory_kwargs))
                b_hh = Parameter(ember.empty(gate_size, **factory_kwargs))
                if self.proj_size == 0:
                    layer_params = (w_ih, w_hh, b_ih, b_hh) if bias else (w_ih, w_hh)
                else:
                    w_hr = Parameter(ember.empty((proj_size, hidden_size), **factory_kwargs))
                    layer_params = (w_ih, w_hh, b_ih, b_hh, w_hr) if bias else (w_ih, w_hh, w_hr)
                suffix = "_reverse" if direction == 1 else ""
                param_names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    param_names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if self.proj_size > 0:
                    param_names += ["weight_hr_l{}{}"]
                param_names = [x.format(layer, suffix) for x in param_names]
                for name, param in zip(param_names, layer_params):
                    setattr(self, name, param)
                self._flat_weights_names.extend(param_names)
                self._all_weights.append(param_names)
        self._init_flat_weights()
        self.reset_parameters()

    def _init_flat_weights(self):
        self._flat_weights = [getattr(self, wn) if hasattr(self, wn) else None
                              for wn in self._flat_weights_names]

    def __setattr__(self, attr, value):
        # Keep _flat_weights (what the op receives) in step with re-assigned parameters.
        if hasattr(self, "_flat_weights_names") and attr in self._flat_weights_names:
            idx = self._flat_weights_names.index(attr)
            self._flat_weights[idx] = value
        super().__setattr__(attr, value)

    def flatten_parameters(self):
        """A no-op on CPU (cuDNN's contiguous weight buffer has no ember counterpart)."""

    def _apply(self, fn):
        ret = super()._apply(fn)
        self._init_flat_weights()
        return ret

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def check_input(self, input, batch_sizes):
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(
                f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx, expected_hidden_size,
                          msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    @property
    def all_weights(self):
        return [[getattr(self, weight) for weight in weights] for weights in self._all_weights]

    def _forward_common(self, input, hx, is_lstm):
        # Checks, default states, unbatched inputs and packed batches live in C++
        # (ember::nn::detail::rnn_forward, shared with the C++ modules).
        packed = isinstance(input, PackedSequence)
        if packed:
            data, batch_sizes, sorted_indices, unsorted_indices = input
        else:
            data, batch_sizes, sorted_indices, unsorted_indices = input, None, None, None
        output, hidden = _nn.rnn_forward(
            self.mode, self.input_size, self.hidden_size, self.num_layers, self.bias,
            self.batch_first, self.dropout, self.bidirectional, self.proj_size,
            list(self._flat_weights), self.training, data, batch_sizes, sorted_indices,
            unsorted_indices, hx)
        if packed:
            output = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
        return output, hidden


class RNN(RNNBase):
    """A multi-layer Elman RNN with tanh or relu."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'")
        super().__init__(mode, *args, **kwargs)

    def __setattr__(self, attr, value):
        if attr == "nonlinearity" and "_parameters" not in self.__dict__:
            object.__setattr__(self, attr, value)  # set before Module.__init__, like torch
            return
        super().__setattr__(attr, value)

    def forward(self, input, hx=None):
        return self._forward_common(input, hx, False)


class LSTM(RNNBase):
    """A multi-layer LSTM (with optional projections of the hidden state, proj_size)."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx[0], permutation), _apply_permutation(hx[1], permutation)

    def forward(self, input, hx=None):
        return self._forward_common(input, hx, True)


class GRU(RNNBase):
    """A multi-layer gated recurrent unit."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward_common(input, hx, False)


class RNNCellBase(Module):
    """weight_ih [G*H, I], weight_hh [G*H, H] and optional biases, U(-1/sqrt(H), 1/sqrt(H))."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(
            ember.empty((num_chunks * hidden_size, input_size), **factory_kwargs))
        self.weight_hh = Parameter(
            ember.empty((num_chunks * hidden_size, hidden_size), **factory_kwargs))
        if bias:
            self.bias_ih = Parameter(ember.empty(num_chunks * hidden_size, **factory_kwargs))
            self.bias_hh = Parameter(ember.empty(num_chunks * hidden_size, **factory_kwargs))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, input, name):
        assert input.dim() in (1, 2), \
            f"{name}: Expected input to be 1-D or 2-D but received {input.dim()}-D tensor"
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        return input, is_batched


class RNNCell(RNNCellBase):
    """One Elman step: h' = act(W_ih x + b_ih + W_hh h + b_hh)."""

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device,
                         dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, is_batched = self._prepare(input, "RNNCell")
        if hx is None:
            hx = ember.zeros(input.size(0), self.hidden_size, dtype=input.dtype)
        else:
            hx = hx.unsqueeze(0) if not is_batched else hx
        if self.nonlinearity == "tanh":
            ret = _nn.rnn_tanh_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih,
                                    self.bias_hh)
        elif self.nonlinearity == "relu":
            ret = _nn.rnn_relu_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih,
                                    self.bias_hh)
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step; returns (h', c')."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        input, is_batched = self._prepare(input, "LSTMCell")
        if hx is None:
            zeros = ember.zeros(input.size(0), self.hidden_size, dtype=input.dtype)
            hx = (zeros, zeros)
        else:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0)) if not is_batched else hx
        ret = _nn.lstm_cell(input, tuple(hx), self.weight_ih, self.weight_hh, self.bias_ih,
                            self.bias_hh)
        if not is_batched:
            ret = (ret[0].squeeze(0), ret[1].squeeze(0))
        return tuple(ret)


class GRUCell(RNNCellBase):
    """One GRU step."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        input, is_batched = self._prepare(input, "GRUCell")
        if hx is None:
            hx = ember.zeros(input.size(0), self.hidden_size, dtype=input.dtype)
        else:
            hx = hx.unsqueeze(0) if not is_batched else hx
        ret = _nn.gru_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih,
                           self.bias_hh)
        return ret if is_batched else ret.squeeze(0)
