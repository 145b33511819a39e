"""Work that cannot stop itself at a deadline, run in a process that can be stopped there.

cvxpy compiles a design problem before its solver starts, and neither the compilation nor
the solver's own time limit can be asked to stop at a given moment (at K = 100 arms in
d = 20 the compilation alone took 6 s); a time limit that must hold runs such work in a
spawned process (one BLAS thread, as every worker of cbai) and kills it when the time is up.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from typing import Any


def _child(sender: Any, function: Callable[..., Any], args: tuple) -> None:
    """Run ``function(*args)`` and send back ("value", result) or ("error", exception)."""
    # Ctrl-C reaches the whole process group; the parent answers it, and stops this process
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        outcome = ("value", function(*args))
    except Exception as error:  # sent to the parent, which raises it
        outcome = ("error", error)
    sender.send(outcome)
    sender.close()


def call_until(deadline: float, function: Callable[..., Any], *args: Any) -> tuple[bool, Any]:
    """``function(*args)`` in a spawned process stopped at ``deadline`` (a :func:`time.monotonic`
    time): (True, its result), or (False, None) when the deadline came first or the process
    ended without an answer (killed). An exception of ``function`` is raised here. The
    function, its arguments and its result must pickle."""
    import multiprocessing

    from cbai_cli.numerics.blas_threads import single_threaded_blas

    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    with single_threaded_blas():
        process = context.Process(target=_child, args=(sender, function, args), daemon=True)
        process.start()
    sender.close()  # the child holds its own end: a child that dies closes the pipe
    try:
        if not receiver.poll(max(deadline - time.monotonic(), 0.0)):
            return False, None
        try:
            kind, value = receiver.recv()
        except EOFError:
            return False, None
    finally:
        if process.is_alive():
            process.kill()
        process.join()
        receiver.close()
    if kind == "error":
        raise value
    return True, value
