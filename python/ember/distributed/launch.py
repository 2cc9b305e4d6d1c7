"""ember.distributed.launch: the older name of the launcher (torch.distributed.launch).

It runs ember.distributed.run; workers read their local rank from the LOCAL_RANK environment
variable (as with torch's ``--use-env``), so ``--use-env`` is accepted and has no effect.
"""

import sys

from ember.distributed.run import run


def main(args=None):
    """Runs the launcher; returns its exit code."""
    return run(sys.argv[1:] if args is None else args)


if __name__ == "__main__":
    sys.exit(main())
