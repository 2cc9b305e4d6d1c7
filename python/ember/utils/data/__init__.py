"""ember.utils.data: datasets, samplers and DataLoader (torch.utils.data's API; workers are
processes, or threads with multiprocessing_context="thread")."""

from ember.utils.data._utils import default_collate, default_convert, get_worker_info
from ember.utils.data.dataloader import DataLoader
from ember.utils.data.dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    random_split,
)
from ember.utils.data.sampler import (
    BatchSampler,
    DistributedSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
    "DistributedSampler", "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler",
    "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler", "default_collate",
    "default_convert", "get_worker_info", "random_split",
]
from ember.utils.data import distributed  # noqa: E402,F401  (torch.utils.data.distributed)
