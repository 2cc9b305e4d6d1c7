"""ember.optim.RMSprop (torch.optim.RMSprop's API and update)."""

import ember
from ember import _C
from ember.optim.optimizer import Optimizer, _check_sparse

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    r"""Implements RMSprop (optionally centered, with momentum); torch.optim.RMSprop's
    arguments."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, foreach=None, maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 <= eps:
            raise ValueError("Invalid epsilon value: {}".format(eps))
        if not 0.0 <= momentum:
            raise ValueError("Invalid momentum value: {}".format(momentum))
        if not 0.0 <= weight_decay:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
        if not 0.0 <= alpha:
            raise ValueError("Invalid alpha value: {}".format(alpha))
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("momentum", 0)
            group.setdefault("centered", False)
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)

    def step(self, closure=None):
        """Performs a single optimization step (``closure`` re-evaluates the loss)."""
        loss = self._run_closure(closure)
        with ember.no_grad():
            for group in self.param_groups:
                params, grads, square_avgs, grad_avgs, bufs = [], [], [], [], []
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    _check_sparse(p, "RMSprop")
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = 0
                        state["square_avg"] = ember.zeros_like(p)
                        if group["momentum"] > 0:
                            state["momentum_buffer"] = ember.zeros_like(p)
                        if group["centered"]:
                            state["grad_avg"] = ember.zeros_like(p)
                    params.append(p)
                    grads.append(p.grad)
                    square_avgs.append(state["square_avg"])
                    if group["momentum"] > 0:
                        bufs.append(state["momentum_buffer"])
                    if group["centered"]:
                        grad_avgs.append(state["grad_avg"])
                    state["step"] += 1
                _C._optim.rmsprop_step(params, grads, square_avgs, grad_avgs, bufs,
                                       lr=group["lr"], alpha=group["alpha"], eps=group["eps"],
                                       weight_decay=group["weight_decay"],
                                       momentum=group["momentum"], centered=group["centered"],
                                       maximize=group["maximize"])
        return loss
