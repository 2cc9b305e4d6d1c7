"""ember.optim: optimizers and learning-rate schedulers with torch.optim's API."""

from ember.optim.optimizer import Optimizer
from ember.optim.adadelta import Adadelta
from ember.optim.adagrad import Adagrad
from ember.optim.adam import Adam
from ember.optim.adamax import Adamax
from ember.optim.adamw import AdamW
from ember.optim.lbfgs import LBFGS
from ember.optim.nadam import NAdam
from ember.optim.radam import RAdam
from ember.optim.rmsprop import RMSprop
from ember.optim.sgd import SGD
from ember.optim import lr_scheduler

__all__ = ["Optimizer", "Adadelta", "Adagrad", "Adam", "Adamax", "AdamW", "LBFGS", "NAdam",
           "RAdam", "RMSprop", "SGD", "lr_scheduler"]
