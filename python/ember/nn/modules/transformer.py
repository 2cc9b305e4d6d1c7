"""Transformer layers (torch.nn.modules.transformer, PyTorch 1.13): thin modules over
MultiheadAttention, Linear, Dropout and LayerNorm, so state_dict keys match PyTorch's. In eval
mode with no gradient needed, TransformerEncoderLayer runs the fused inference path
(ember._C._transformer_encoder_layer_fwd, PyTorch 1.12's BetterTransformer)."""

import copy

import ember
from ember import _C
from ember.nn import functional as F
from ember.nn.init import xavier_uniform_
from ember.nn.modules.activation import GELU, MultiheadAttention, ReLU
from ember.nn.modules.container import ModuleList
from ember.nn.modules.dropout import Dropout
from ember.nn.modules.linear import Linear
from ember.nn.modules.module import Module
from ember.nn.modules.normalization import LayerNorm

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer"]


def _get_activation_fn(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError("activation should be relu/gelu, not {}".format(activation))


def _get_clones(module, n):
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _autocast_enabled():
    fn = getattr(ember, "is_autocast_enabled", None)
    cpu_fn = getattr(ember, "is_autocast_cpu_enabled", None)
    return bool((fn is not None and fn()) or (cpu_fn is not None and cpu_fn()))


def _causal_mask(is_causal, mask, x, seq_dim):
    """PyTorch 2.x's is_causal hint: the given mask is taken as the causal one; without a mask,
    the causal mask is built."""
    if is_causal and mask is None:
        sz = x.size(seq_dim)
        return ember.triu(ember.full((sz, sz), float("-inf"), dtype=x.dtype), diagonal=1)
    return mask


def _check_key_padding_mask(mask):
    if mask is not None and mask.dtype != ember.bool and not ember.is_floating_point(mask):
        raise AssertionError("only bool and floating types of key_padding_mask are supported")


class Transformer(Module):
    """The encoder-decoder model of "Attention Is All You Need"."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
                 device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout,
                                                    activation, layer_norm_eps, batch_first,
                                                    norm_first, **factory_kwargs)
            encoder_norm = LayerNorm(d_model, eps=layer_norm_eps, **factory_kwargs)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout,
                                                    activation, layer_norm_eps, batch_first,
                                                    norm_first, **factory_kwargs)
            decoder_norm = LayerNorm(d_model, eps=layer_norm_eps, **factory_kwargs)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        is_batched = src.dim() == 3
        if not self.batch_first and src.size(1) != tgt.size(1) and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        elif self.batch_first and src.size(0) != tgt.size(0) and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        seq = 1 if self.batch_first and is_batched else 0
        src_mask = _causal_mask(src_is_causal, src_mask, src, seq)
        tgt_mask = _causal_mask(tgt_is_causal, tgt_mask, tgt, seq)
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask)

    @staticmethod
    def generate_square_subsequent_mask(sz, device="cpu"):
        """(sz, sz) float: -inf above the diagonal, 0 elsewhere."""
        return ember.triu(ember.full((sz, sz), float("-inf"), device=device), diagonal=1)

    def _reset_parameters(self):
        for p in self.parameters():
            if p.dim() > 1:
                xavier_uniform_(p)


class TransformerEncoder(Module):
    """A stack of `num_layers` copies of an encoder layer, then an optional norm. In the
    inference fast path with a src_key_padding_mask, the padded positions are packed away once
    for all layers and come back as zeros (PyTorch 1.13's nested-tensor path)."""

    __constants__ = ["norm"]

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check

    def _packing_ok(self, src, mask, src_key_padding_mask):
        """PyTorch 1.13's conditions for its nested-tensor path (the first layer's fast-path
        conditions, post-LN, a left-aligned mask when mask_check), and every layer fast."""
        if len(self.layers) == 0 or not self.enable_nested_tensor:
            return False
        if src_key_padding_mask is None or mask is not None or src.dim() != 3:
            return False
        if not isinstance(self.layers[0], TransformerEncoderLayer) or self.layers[0].norm_first:
            return False
        for mod in self.layers:
            if not isinstance(mod, TransformerEncoderLayer) or \
                    mod._fast_path_blocker(src, None, src_key_padding_mask) != "":
                return False
        if getattr(self, "mask_check", True):
            pad = src_key_padding_mask if src_key_padding_mask.dtype == ember.bool \
                else src_key_padding_mask != 0
            keep = pad.logical_not()
            lengths = keep.sum(1, keepdim=True)
            left = ember.arange(pad.size(1)).unsqueeze(0) < lengths
            if not ember.equal(left, keep):
                return False
        return True

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        _check_key_padding_mask(src_key_padding_mask)
        first = self.layers[0] if len(self.layers) else None
        seq = 1 if getattr(first, "self_attn", None) is not None and \
            first.self_attn.batch_first and src.dim() == 3 else 0
        mask = _causal_mask(is_causal, mask, src, seq)
        if self._packing_ok(src, mask, src_key_padding_mask):
            packed, lengths = _C._transformer_pack_padded(src, src_key_padding_mask)
            for mod in self.layers:
                packed = mod._fast_forward(packed, seq_lengths=lengths)
            output = _C._transformer_unpack_padded(packed, src_key_padding_mask)
        else:
            output = src
            for mod in self.layers:
                output = mod(output, src_mask=mask, src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(Module):
    """A stack of `num_layers` copies of a decoder layer, then an optional norm."""

    __constants__ = ["norm"]

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        first = self.layers[0] if len(self.layers) else None
        seq = 1 if getattr(first, "self_attn", None) is not None and \
            first.self_attn.batch_first and tgt.dim() == 3 else 0
        tgt_mask = _causal_mask(tgt_is_causal, tgt_mask, tgt, seq)
        output = tgt
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask,
                         memory_key_padding_mask=memory_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerEncoderLayer(Module):
    """Self-attention then feed-forward, each with a residual and layer norm."""

    __constants__ = ["batch_first", "norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, device=None,
                 dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, **factory_kwargs)
        self.linear1 = Linear(d_model, dim_feedforward, **factory_kwargs)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, **factory_kwargs)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, **factory_kwargs)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, **factory_kwargs)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def __setstate__(self, state):
        self.__dict__.update(state)
        if not hasattr(self, "activation"):
            self.activation = F.relu

    def _fast_path_blocker(self, src, src_mask, src_key_padding_mask):
        """Why forward would not take the fast path ("" when it would): PyTorch 1.13's checks,
        plus hooks on the layer or its attention (the fused path would skip them)."""
        if src.dim() != 3:
            return "input not batched; expected src.dim() of 3 but got {}".format(src.dim())
        if self.training:
            return "training is enabled"
        if not self.self_attn.batch_first:
            return "self_attn.batch_first was not True"
        if not self.self_attn._qkv_same_embed_dim:
            return "self_attn._qkv_same_embed_dim was not True"
        if not self.activation_relu_or_gelu:
            return "activation_relu_or_gelu was not True"
        if not (self.norm1.eps == self.norm2.eps):
            return "norm1.eps is not equal to norm2.eps"
        if src_mask is not None:
            return "src_mask is not supported for fastpath"
        if self.self_attn.num_heads % 2 == 1:
            return "num_head is odd"
        if _autocast_enabled():
            return "autocast is enabled"
        if self.self_attn.in_proj_bias is None:
            return "self_attn has no bias"
        if not self.norm1.elementwise_affine or not self.norm2.elementwise_affine:
            return "a layer norm has no affine parameters"
        for m in (self, self.self_attn, self.self_attn.out_proj, self.linear1, self.linear2,
                  self.norm1, self.norm2):
            if m._forward_hooks or m._forward_pre_hooks:
                return "a forward hook is registered"
        if ember.is_grad_enabled():
            if src.requires_grad or any(p.requires_grad for p in self._fast_path_tensors()):
                return ("grad is enabled and at least one of query or the input/output "
                        "projection weights or biases requires_grad")
        return ""

    def _fast_path_tensors(self):
        return (self.self_attn.in_proj_weight, self.self_attn.in_proj_bias,
                self.self_attn.out_proj.weight, self.self_attn.out_proj.bias,
                self.norm1.weight, self.norm1.bias, self.norm2.weight, self.norm2.bias,
                self.linear1.weight, self.linear1.bias, self.linear2.weight, self.linear2.bias)

    def _fast_forward(self, src, mask=None, mask_type=None, seq_lengths=None):
        return _C._transformer_encoder_layer_fwd(
            src, self.self_attn.embed_dim, self.self_attn.num_heads,
            self.self_attn.in_proj_weight, self.self_attn.in_proj_bias,
            self.self_attn.out_proj.weight, self.self_attn.out_proj.bias,
            self.activation_relu_or_gelu == 2, self.norm_first, self.norm1.eps,
            self.norm1.weight, self.norm1.bias, self.norm2.weight, self.norm2.bias,
            self.linear1.weight, self.linear1.bias, self.linear2.weight, self.linear2.bias,
            mask, mask_type, seq_lengths=seq_lengths)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        _check_key_padding_mask(src_key_padding_mask)
        src_mask = _causal_mask(is_causal, src_mask, src,
                                1 if self.self_attn.batch_first and src.dim() == 3 else 0)
        if self._fast_path_blocker(src, src_mask, src_key_padding_mask) == "":
            if src_key_padding_mask is not None:
                return self._fast_forward(src, src_key_padding_mask, 1)
            return self._fast_forward(src)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    """Self-attention, attention over the encoder's memory, then feed-forward, each with a
    residual and layer norm."""

    __constants__ = ["batch_first", "norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, device=None,
                 dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, **factory_kwargs)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, **factory_kwargs)
        self.linear1 = Linear(d_model, dim_feedforward, **factory_kwargs)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, **factory_kwargs)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, **factory_kwargs)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, **factory_kwargs)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, **factory_kwargs)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        if isinstance(activation, str):
            self.activation = _get_activation_fn(activation)
        else:
            self.activation = activation

    def __setstate__(self, state):
        if "activation" not in state:
            state["activation"] = F.relu
        self.__dict__.update(state)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        tgt_mask = _causal_mask(tgt_is_causal, tgt_mask, tgt,
                                1 if self.self_attn.batch_first and tgt.dim() == 3 else 0)
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)
