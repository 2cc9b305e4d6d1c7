"""ember.nn: modules, layers, functional forms, init and utilities (torch.nn's API)."""

from ember.nn import functional  # noqa: F401
from ember.nn import init  # noqa: F401
from ember.nn import utils  # noqa: F401
from ember.nn.modules import *  # noqa: F401,F403
from ember.nn.modules.module import Module  # noqa: F401
from ember.nn.parameter import Parameter  # noqa: F401
from ember.nn import parallel  # noqa: F401
from ember.nn.parallel import DataParallel  # noqa: F401
