"""ember.optim.SGD (torch.optim.SGD's API and update)."""

import ember
from ember import _C
from ember.optim.optimizer import Optimizer, _check_sparse, required

__all__ = ["SGD"]


class SGD(Optimizer):
    r"""Stochastic gradient descent with momentum, dampening and Nesterov momentum;
    torch.optim.SGD's arguments."""

    def __init__(self, params, lr=required, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False):
        if lr is not required and lr < 0.0:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if momentum < 0.0:
            raise ValueError("Invalid momentum value: {}".format(momentum))
        if weight_decay < 0.0:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)

    def step(self, closure=None):
        """Performs a single optimization step (``closure`` re-evaluates the loss)."""
        loss = self._run_closure(closure)
        with ember.no_grad():
            for group in self.param_groups:
                params, grads, bufs = [], [], []
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    _check_sparse(p, "SGD")
                    params.append(p)
                    grads.append(p.grad)
                    bufs.append(self.state[p].get("momentum_buffer"))
                new_bufs = _C._optim.sgd_step(
                    params, grads, bufs, lr=group["lr"], momentum=group["momentum"],
                    dampening=group["dampening"], weight_decay=group["weight_decay"],
                    nesterov=group["nesterov"], maximize=group["maximize"])
                for p, b in zip(params, new_bufs):
                    self.state[p]["momentum_buffer"] = b
        return loss
