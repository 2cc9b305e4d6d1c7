"""ember.optim.Adam (torch.optim.Adam's API and update)."""

import ember
from ember import _C
from ember.optim.optimizer import Optimizer, _check_sparse

__all__ = ["Adam"]


def _check_adam_args(lr, eps, betas, weight_decay):
    if not 0.0 <= lr:
        raise ValueError("Invalid learning rate: {}".format(lr))
    if not 0.0 <= eps:
        raise ValueError("Invalid epsilon value: {}".format(eps))
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError("Invalid beta parameter at index 0: {}".format(betas[0]))
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError("Invalid beta parameter at index 1: {}".format(betas[1]))
    if not 0.0 <= weight_decay:
        raise ValueError("Invalid weight_decay value: {}".format(weight_decay))


def _adam_family_step(opt, closure, name, decoupled):
    loss = opt._run_closure(closure)
    with ember.no_grad():
        for group in opt.param_groups:
            params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps = [], [], [], [], [], []
            amsgrad = group["amsgrad"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                _check_sparse(p, name)
                state = opt.state[p]
                if len(state) == 0:
                    state["step"] = ember.tensor(0.0)
                    state["exp_avg"] = ember.zeros_like(p)
                    state["exp_avg_sq"] = ember.zeros_like(p)
                    if amsgrad:
                        state["max_exp_avg_sq"] = ember.zeros_like(p)
                params.append(p)
                grads.append(p.grad)
                exp_avgs.append(state["exp_avg"])
                exp_avg_sqs.append(state["exp_avg_sq"])
                if amsgrad:
                    max_exp_avg_sqs.append(state["max_exp_avg_sq"])
                steps.append(state["step"])
            beta1, beta2 = group["betas"]
            _C._optim.adam_step(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps,
                                lr=group["lr"], beta1=beta1, beta2=beta2, eps=group["eps"],
                                weight_decay=group["weight_decay"], amsgrad=amsgrad,
                                maximize=group["maximize"], decoupled=decoupled)
    return loss


class Adam(Optimizer):
    r"""Implements Adam (Kingma & Ba), with the AMSGrad variant; torch.optim.Adam's arguments.
    ``foreach``, ``capturable``, ``differentiable`` and ``fused`` are accepted: the update always
    runs in ember's fused multi-tensor kernel."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=False):
        _check_adam_args(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def step(self, closure=None):
        """Performs a single optimization step (``closure`` re-evaluates the loss)."""
        return _adam_family_step(self, closure, "Adam", False)
