"""The worker pool: run a list of calls in forked processes, results in order, when it pays."""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

PARALLEL_MIN_CALLS = 300  # below this, starting worker processes costs more than it saves
T = TypeVar("T")
_CALLS: list[Callable[[], Any]] = []  # read by forked workers, which inherit it


def run_parallel(calls: list[Callable[[], T]], jobs: int, done: Callable[[int, int], None] | None = None) -> Iterator[T]:
    """Yield the results of calls, in order, computed by `jobs` forked processes when worth it.

    done(finished, total) is called as results arrive, for progress reports.
    """
    global _CALLS
    if jobs <= 1 or len(calls) < PARALLEL_MIN_CALLS or "fork" not in multiprocessing.get_all_start_methods():
        stream: Iterator[T] = (call() for call in calls)
    else:
        _CALLS = list(calls)  # workers are forked after the calls exist: the catalog is shared, not pickled
        pool = multiprocessing.get_context("fork").Pool(jobs, initializer=_stoppable)
        stream = pool.imap(_run_call, range(len(_CALLS)), chunksize=max(1, min(64, len(_CALLS) // (jobs * 8))))
    try:
        for finished, result in enumerate(stream, 1):
            yield result
            if done and finished % 100 == 0:
                done(finished, len(calls))
    finally:
        if _CALLS:
            pool.terminate()
            _CALLS = []


def _stoppable() -> None:
    """Let the parent stop a worker: pool.terminate()'s SIGTERM kills it whatever handler the parent
    had (serve turns SIGTERM into KeyboardInterrupt, and a worker that inherited that could block
    for ever in its exit, and the parent with it); Ctrl-C is the parent's to handle."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run_call(index: int) -> Any:
    return _CALLS[index]()
