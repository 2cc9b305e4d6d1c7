"""ember.multiprocessing: Python's multiprocessing with tensors that travel by shared memory.

Everything of the standard module is re-exported (Process, Queue, Pool, get_context, ...). On
import, reducers are registered on multiprocessing.reduction.ForkingPickler, so a tensor (or
Parameter, and so a module) put on a queue or pipe, or passed to a spawned process, is moved to
shared memory and sent as a file descriptor: both processes then see one block, and writes on
either side are visible to the other. spawn() runs a function in several processes and reports
a failing rank."""

import multiprocessing

from multiprocessing import *  # noqa: F401,F403

from ember.multiprocessing.reductions import (  # noqa: F401
    get_all_sharing_strategies,
    get_sharing_strategy,
    init_reductions,
    set_sharing_strategy,
)
from ember.multiprocessing.spawn import (  # noqa: F401
    ProcessContext,
    ProcessException,
    ProcessExitedException,
    ProcessRaisedException,
    SpawnContext,
    spawn,
    start_processes,
)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies",
           "spawn", "start_processes", "ProcessContext", "SpawnContext", "ProcessException",
           "ProcessRaisedException", "ProcessExitedException"]
__all__ += multiprocessing.__all__

init_reductions()
