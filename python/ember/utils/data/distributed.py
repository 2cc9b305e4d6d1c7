"""torch.utils.data.distributed: the sampler that gives each rank its share of a dataset."""

from ember.utils.data.sampler import DistributedSampler

__all__ = ["DistributedSampler"]
