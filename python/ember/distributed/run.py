"""ember.distributed.run: the launcher of distributed jobs (torchrun's twin).

``python -m ember.distributed.run --nproc-per-node 2 train.py --epochs 3`` starts two workers
running ``train.py`` under this interpreter, each with RANK, LOCAL_RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT and TORCHELASTIC_RESTART_COUNT set, their output prefixed with
``[rank N]: ``. It is the same launcher as the ``ember-run`` program (``ember-run -h`` lists
the options: --nnodes MIN:MAX, --rdzv-endpoint, --max-restarts, --standalone, ...).
"""

import sys

from ember import _C

__all__ = ["main", "run"]


def run(args, python_executable=None):
    """Runs the launcher with the command-line arguments ``args`` (a list of strings, without
    the program name); returns its exit code (0 when every worker succeeded)."""
    if isinstance(args, str) or not all(isinstance(a, str) for a in args):
        raise TypeError("run(): args must be a list of strings, got {!r}".format(args))
    exe = python_executable if python_executable is not None else sys.executable
    sys.stdout.flush()
    sys.stderr.flush()
    return _C._distributed._run_main(list(args), exe or "")


def main(args=None):
    """The command-line entry point: ``args`` defaults to ``sys.argv[1:]``; returns the exit
    code."""
    return run(sys.argv[1:] if args is None else args)


if __name__ == "__main__":
    sys.exit(main())
