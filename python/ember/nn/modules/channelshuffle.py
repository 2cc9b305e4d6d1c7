"""ChannelShuffle (torch.nn.modules.channelshuffle)."""

from ember.nn import functional as F
from ember.nn.modules.module import Module

__all__ = ["ChannelShuffle"]


def _channel_shuffle(input, groups):
    # (N, g, C/g, *) -> (N, C/g, g, *) -> (N, C, *): interleaves the groups' channels.
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but "
                           f"got input with sizes {list(input.shape)}")
    c = input.shape[1]
    if c % groups != 0:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    n = input.shape[0]
    rest = list(input.shape[2:])
    out = input.reshape([n, groups, c // groups] + rest).transpose(1, 2)
    return out.reshape([n, c] + rest)


class ChannelShuffle(Module):
    """Splits the channels into `groups` and interleaves them."""

    __constants__ = ["groups"]

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        fn = getattr(F, "channel_shuffle", None) or _channel_shuffle
        return fn(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
