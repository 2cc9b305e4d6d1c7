"""Shared pieces of the model builders: loading weights from local files, torchvision's
channel rounding and its conv-norm-activation block."""

import os
import pickle

import ember
from ember import nn

__all__ = ["load_weights", "make_divisible", "Conv2dNormActivation"]


def load_weights(model, weights, pretrained, name):
    """Loads `weights` into `model` (strict). `weights` is None, a path to a state dict saved with
    ember.save / safetensors, or a state dict. Nothing is ever downloaded, so `pretrained=True`
    and torchvision's weight names ("DEFAULT", "IMAGENET1K_V1", enums) raise RuntimeError."""
    if pretrained:
        raise RuntimeError(f"{name}(pretrained=True): ember.vision downloads nothing; pass "
                           "weights='path/to/state_dict.safetensors' (saved with ember.save or "
                           "safetensors) instead")
    if weights is None:
        return model
    if isinstance(weights, dict):
        model.load_state_dict(weights)
        return model
    if isinstance(weights, (str, bytes, os.PathLike)):
        path = os.fsdecode(weights)
        if not os.path.isfile(path):
            raise RuntimeError(f"{name}(weights={path!r}): no such file; ember.vision downloads "
                               "nothing, so weights must be a local state dict file")
        try:
            # Weights only: a .pth from torch.save loads without running code from the file.
            state = ember.load(path, weights_only=True)
        except (RuntimeError, pickle.UnpicklingError) as e:
            raise RuntimeError(f"{name}(weights={path!r}): cannot read the state dict ({e}); "
                               "save it with ember.save(model.state_dict(), path), torch.save "
                               "or as safetensors") from None
        if isinstance(state, dict) and "state_dict" in state and isinstance(
                state["state_dict"], dict):
            state = state["state_dict"]
        model.load_state_dict(state)
        return model
    raise RuntimeError(f"{name}(weights={weights!r}): ember.vision downloads nothing; weights "
                       "must be None, a local state dict file or a state dict")


def make_divisible(v, divisor, min_value=None):
    """Rounds a channel count to the nearest multiple of `divisor`, never below 90% of `v`."""
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


class Conv2dNormActivation(nn.Sequential):
    """Conv2d ("0"), then a norm layer ("1") and an activation ("2") when given, as torchvision's
    block; padding defaults to keep the size at stride 1."""

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None,
                 groups=1, norm_layer=nn.BatchNorm2d, activation_layer=nn.ReLU, dilation=1,
                 inplace=True, bias=None):
        if padding is None:
            padding = (kernel_size - 1) // 2 * dilation
        if bias is None:
            bias = norm_layer is None
        layers = [nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding,
                            dilation=dilation, groups=groups, bias=bias)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            params = {} if inplace is None else {"inplace": inplace}
            layers.append(activation_layer(**params))
        super().__init__(*layers)
        self.out_channels = out_channels
