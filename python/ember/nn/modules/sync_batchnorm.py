"""SyncBatchNorm (torch.nn.SyncBatchNorm): batch normalisation whose batch statistics cover the
whole batch across the ranks of a process group.

In training each rank computes its per-channel mean, biased variance and element count; the
ranks all-gather them (counts may differ per rank, as torch's
batch_norm_gather_stats_with_counts) and combine them into the global mean and variance
(Chan's pairwise formula, in float64, so no E[x²] - E[x]² cancellation). The running
statistics take the unbiased global variance. Backward all-reduces sum(dy) and
sum(dy * (x - mean)) so the input gradient is that of BatchNorm over the concatenated batch;
the weight and bias gradients stay local (DistributedDataParallel averages them).

Differences from PyTorch 1.13, which runs SyncBatchNorm on CUDA only (a CPU input raises
ValueError "SyncBatchNorm expected input tensor to be on GPU"): ember runs it on the CPU, its
only device. Where no synchronisation is needed -- eval mode, a group of one rank, or
ember.distributed not initialised -- it computes exactly BatchNorm (torch 1.13 would raise
for the uninitialised default group).
"""

import ember
from ember.autograd import Function
from ember.nn import functional as F
from ember.nn.modules.batchnorm import _BatchNorm

__all__ = ["SyncBatchNorm"]


def _reduce_dims(x):
    return [0] + list(range(2, x.dim()))


def _per_channel(t, x):
    """`t` (C,) shaped to broadcast against `x` (N, C, ...)."""
    return t.reshape([1, -1] + [1] * (x.dim() - 2))


class _SyncBatchNormFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, eps, momentum,
                process_group, world_size):
        import ember.distributed as dist

        input = input.contiguous()
        num_channels = input.size(1)
        count = input.numel() // num_channels
        if count == 1 and world_size < 2:
            raise ValueError("Expected more than 1 value per channel when training, got input "
                             f"size {list(input.shape)}")
        if count > 0:
            dims = _reduce_dims(input)
            local = ember.cat([input.mean(dims).double(),
                               input.var(dims, unbiased=False).double(),
                               ember.tensor([float(count)], dtype=ember.float64)])
        else:
            # An empty shard still takes part in the collective; its zero count drops it from
            # the combination.
            local = ember.zeros(2 * num_channels + 1, dtype=ember.float64)
        gathered = [ember.empty_like(local) for _ in range(world_size)]
        dist.all_gather(gathered, local, group=process_group)
        stats = ember.stack(gathered, 0)
        means = stats[:, :num_channels]
        variances = stats[:, num_channels:2 * num_channels]
        counts = stats[:, 2 * num_channels:]
        total = counts.sum()
        mean = (means * counts).sum(0) / total
        m2 = ((variances + (means - mean) ** 2) * counts).sum(0)
        var = m2 / total
        invstd = (var + eps).rsqrt()

        total_count = float(total)
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean.to(running_mean.dtype), alpha=momentum)
        if running_var is not None:
            unbiased = m2 / (total_count - 1) if total_count > 1 else var * float("inf")
            running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype), alpha=momentum)

        mean = mean.to(input.dtype)
        invstd = invstd.to(input.dtype)
        ctx.save_for_backward(input, weight, mean, invstd)
        ctx.process_group = process_group
        ctx.total_count = total_count
        if input.numel() == 0:
            return ember.empty_like(input)
        out = (input - _per_channel(mean, input)) * _per_channel(invstd, input)
        if weight is not None:
            out = out * _per_channel(weight, input)
        if bias is not None:
            out = out + _per_channel(bias, input)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        import ember.distributed as dist

        dy = grad_output.contiguous()
        x, weight, mean, invstd = ctx.saved_tensors
        need_input, need_weight, need_bias = ctx.needs_input_grad[:3]
        grad_input = grad_weight = grad_bias = None
        num_channels = x.size(1)
        if x.numel() > 0:
            dims = _reduce_dims(x)
            xmu = x - _per_channel(mean, x)
            sum_dy = dy.sum(dims)
            sum_dy_xmu = (dy * xmu).sum(dims)
            if weight is not None and need_weight:
                grad_weight = sum_dy_xmu * invstd
            if weight is not None and need_bias:
                grad_bias = sum_dy
            if need_input:
                combined = ember.cat([sum_dy, sum_dy_xmu])
                dist.all_reduce(combined, op=dist.ReduceOp.SUM, group=ctx.process_group)
                sum_dy, sum_dy_xmu = combined[:num_channels], combined[num_channels:]
                n = ctx.total_count
                scale = invstd if weight is None else invstd * weight
                grad_input = (dy - _per_channel(sum_dy / n, x)
                              - xmu * _per_channel(invstd * invstd * sum_dy_xmu / n, x))
                grad_input = grad_input * _per_channel(scale, x)
        elif need_input:
            # The peers with data wait for this rank's (zero) share of the sums.
            combined = ember.zeros(2 * num_channels, dtype=x.dtype)
            dist.all_reduce(combined, op=dist.ReduceOp.SUM, group=ctx.process_group)
            grad_input = ember.zeros_like(x)
        return grad_input, grad_weight, grad_bias, None, None, None, None, None, None


def _sync_world_size(process_group):
    """The size of the group to synchronise over, or 1 when there is nothing to sync with."""
    import ember.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return 1
    return dist.get_world_size(process_group)


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation over (N, C, ...) with statistics synchronised across the ranks of
    `process_group` (the default group when None) in training."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats,
                         device=device, dtype=dtype)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input):
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        exponential_average_factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                exponential_average_factor = 1.0 / float(self.num_batches_tracked)
            else:
                exponential_average_factor = self.momentum
        if self.training:
            bn_training = True
        else:
            bn_training = self.running_mean is None and self.running_var is None
        running_mean = self.running_mean if not self.training or self.track_running_stats else None
        running_var = self.running_var if not self.training or self.track_running_stats else None

        world_size = 1
        if bn_training and self.training:
            world_size = _sync_world_size(self.process_group)
        if world_size <= 1:
            return F.batch_norm(input, running_mean, running_var, self.weight, self.bias,
                                bn_training, exponential_average_factor, self.eps)
        return _SyncBatchNormFunction.apply(input, self.weight, self.bias, running_mean,
                                            running_var, self.eps, exponential_average_factor,
                                            self.process_group, world_size)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """Replaces every BatchNorm*d in `module` (recursively) by a SyncBatchNorm sharing its
        parameters and buffers; returns the new module when `module` itself is one."""
        output = module
        if isinstance(module, _BatchNorm):
            output = SyncBatchNorm(module.num_features, module.eps, module.momentum,
                                   module.affine, module.track_running_stats, process_group)
            if module.affine:
                with ember.no_grad():
                    output.weight = module.weight
                    output.bias = module.bias
            output.running_mean = module.running_mean
            output.running_var = module.running_var
            output.num_batches_tracked = module.num_batches_tracked
            if hasattr(module, "qconfig"):
                output.qconfig = module.qconfig
        for name, child in module.named_children():
            output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return output
