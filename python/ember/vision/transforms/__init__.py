"""torchvision.transforms for tensors (one image C×H×W or a batch ..., C, H, W) and, where
torchvision does, PIL images; `functional` holds the functions the classes call."""

from ember.vision.transforms import functional  # noqa: F401
from ember.vision.transforms.transforms import *  # noqa: F401,F403
from ember.vision.transforms.transforms import __all__  # noqa: F401
