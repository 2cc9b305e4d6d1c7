"""ember.optim.Adagrad (torch.optim.Adagrad's API and update)."""

import ember
from ember import _C
from ember.optim.optimizer import Optimizer, _check_sparse

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    r"""Implements Adagrad; torch.optim.Adagrad's arguments. The accumulators are created at
    construction (filled with ``initial_accumulator_value``)."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False):
        if not 0.0 <= lr:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 <= lr_decay:
            raise ValueError("Invalid lr_decay value: {}".format(lr_decay))
        if not 0.0 <= weight_decay:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
        if not 0.0 <= initial_accumulator_value:
            raise ValueError("Invalid initial_accumulator_value value: {}".format(
                initial_accumulator_value))
        if not 0.0 <= eps:
            raise ValueError("Invalid epsilon value: {}".format(eps))
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = ember.tensor(0.0)
                init_value = group["initial_accumulator_value"]
                state["sum"] = ember.full_like(p, init_value)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)

    def share_memory(self):
        """Moves the accumulators into shared memory (hogwild training shares the optimizer)."""
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["sum"].share_memory_()

    def step(self, closure=None):
        """Performs a single optimization step (``closure`` re-evaluates the loss)."""
        loss = self._run_closure(closure)
        with ember.no_grad():
            for group in self.param_groups:
                params, grads, sums, steps = [], [], [], []
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    _check_sparse(p, "Adagrad")
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = ember.tensor(0.0)
                        state["sum"] = ember.full_like(p, group["initial_accumulator_value"])
                    params.append(p)
                    grads.append(p.grad)
                    sums.append(state["sum"])
                    steps.append(state["step"])
                _C._optim.adagrad_step(params, grads, sums, steps, lr=group["lr"],
                                       weight_decay=group["weight_decay"],
                                       lr_decay=group["lr_decay"], eps=group["eps"],
                                       maximize=group["maximize"])
        return loss
