"""torchvision.models for the supported subset: ResNet (18–152, ResNeXt, Wide), VGG (11–19, with
and without batch norm) and MobileNetV2, with torchvision's module and parameter names so its
state dicts load strictly. Weights come only from local files; nothing is downloaded."""

from ember.vision.models.mobilenetv2 import *  # noqa: F401,F403
from ember.vision.models.resnet import *  # noqa: F401,F403
from ember.vision.models.vgg import *  # noqa: F401,F403
from ember.vision.models import mobilenetv2, resnet, vgg  # noqa: F401
from ember.vision.models.mobilenetv2 import __all__ as _mobilenet_all
from ember.vision.models.resnet import __all__ as _resnet_all
from ember.vision.models.vgg import __all__ as _vgg_all

__all__ = _resnet_all + _vgg_all + _mobilenet_all
