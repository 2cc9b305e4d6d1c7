"""The default DDP communication hooks: all-reduce, and all-reduce of a float16 / bfloat16
copy (half the bytes on the wire). Each takes (process_group, bucket) and returns a Future of
the averaged flat gradients. Registered on a DistributedDataParallel model they run as the
reducer's C++ hooks; called directly they run through ember.distributed."""

import ember

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook"]


def _group(process_group):
    import ember.distributed as dist
    return process_group if process_group is not None else dist.group.WORLD


def _allreduce_fut(process_group, tensor):
    import ember.distributed as dist
    group = _group(process_group)
    tensor.div_(group.size())
    fut = dist.all_reduce(tensor, group=group, async_op=True).get_future()
    return fut.then(lambda f: f.value()[0])


def allreduce_hook(process_group, bucket):
    """Averages the bucket with one all-reduce (what DDP does without a hook)."""
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype, process_group, bucket):
    import ember.distributed as dist
    group = _group(process_group)
    compressed = bucket.buffer().to(dtype).div_(group.size())
    fut = dist.all_reduce(compressed, group=group, async_op=True).get_future()

    def decompress(f):
        buf = bucket.buffer()
        buf.copy_(f.value()[0])
        return buf

    return fut.then(decompress)


def fp16_compress_hook(process_group, bucket):
    """Casts the bucket to float16, divides by the group size, all-reduces and casts back."""
    return _compress_hook(ember.float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """As fp16_compress_hook with bfloat16 (wider range, fewer mantissa bits)."""
    return _compress_hook(ember.bfloat16, process_group, bucket)
