"""ChannelShuffle (torch.nn.modules.channelshuffle)."""

from ember.nn import functional as F
from ember.nn.modules.module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Splits the channels into `groups` and interleaves them."""

    __constants__ = ["groups"]

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
