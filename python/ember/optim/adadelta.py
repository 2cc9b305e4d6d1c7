"""ember.optim.Adadelta (torch.optim.Adadelta's API and update)."""

import ember
from ember import _C
from ember.optim.optimizer import Optimizer, _check_sparse

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    r"""Implements Adadelta; torch.optim.Adadelta's arguments."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 maximize=False):
        if not 0.0 <= lr:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 <= rho <= 1.0:
            raise ValueError("Invalid rho value: {}".format(rho))
        if not 0.0 <= eps:
            raise ValueError("Invalid epsilon value: {}".format(eps))
        if not 0.0 <= weight_decay:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        foreach=foreach)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)

    def step(self, closure=None):
        """Performs a single optimization step (``closure`` re-evaluates the loss)."""
        loss = self._run_closure(closure)
        with ember.no_grad():
            for group in self.param_groups:
                params, grads, square_avgs, acc_deltas = [], [], [], []
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    _check_sparse(p, "Adadelta")
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = 0
                        state["square_avg"] = ember.zeros_like(p)
                        state["acc_delta"] = ember.zeros_like(p)
                    params.append(p)
                    grads.append(p.grad)
                    square_avgs.append(state["square_avg"])
                    acc_deltas.append(state["acc_delta"])
                    state["step"] += 1
                _C._optim.adadelta_step(params, grads, square_avgs, acc_deltas, lr=group["lr"],
                                        rho=group["rho"], eps=group["eps"],
                                        weight_decay=group["weight_decay"],
                                        maximize=group["maximize"])
        return loss
