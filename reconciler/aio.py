"""The event loop the commands run on: uvloop's where installed, else asyncio's own.

Why: a large plan's read is bound by the tool's CPU (two cores, shared with the site in every
benchmark), and uvloop's loop -- libuv, in C -- spends about a tenth less of it a call than
asyncio's selector loop written in Python (``bench/bench_http_stack.py``). Nothing here
depends on which loop runs: the same coroutines, the same cancellation on Ctrl-C
(``asyncio.Runner`` handles the signal for either).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

SLICE_SECONDS = 0.001
"""How long ``in_slices`` keeps the loop before handing it back: an answer that arrives
meanwhile waits at most this long (a call takes some 20 ms on the bench's site)."""


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on uvloop's event loop when it is installed.

    The main task's result is kept here, and the task itself ends with ``None``. Why: on
    leaving, ``asyncio.Runner`` asks ``signal.getsignal(SIGINT)``, and Python 3.11's answer
    first tries the handler as a member of an enum; the failed try formats the handler's
    ``repr``, which holds the main task, whose ``repr`` holds its result: a whole site's
    access report (13,614 accesses) or plan, written out field by field and thrown away --
    0.2 s of every large ``access`` (issue 47).
    """
    kept: list[T] = []

    async def keeping() -> None:
        kept.append(await main)

    try:
        import uvloop
    except ImportError:  # an optional speed-up (not built for every platform)
        asyncio.run(keeping())
        return kept[0]
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(keeping())
    return kept[0]


async def in_slices(items: Iterable[T], work: Callable[[T], R]) -> list[R]:
    """``[work(item) for item in items]`` on the event loop, handing it back every
    ``SLICE_SECONDS``.

    Why: a read or an apply spends most of its time waiting for the site's answers, and some
    of what comes after needs nothing from them (a digest of the manifest, say). Made in
    slices while the answers travel, it is ready when they are, and each answer that comes
    in meanwhile waits one slice at most.
    """
    done: list[R] = []
    until = time.perf_counter() + SLICE_SECONDS
    for item in items:
        done.append(work(item))
        if time.perf_counter() >= until:
            await asyncio.sleep(0)
            until = time.perf_counter() + SLICE_SECONDS
    return done


@asynccontextmanager
async def meanwhile(work: Awaitable[T]) -> AsyncIterator[asyncio.Future[T]]:
    """``work`` started as a task for the block, which awaits it when it needs the result;
    cancelled if the block leaves without it (an error, Ctrl-C)."""
    task = asyncio.ensure_future(work)
    task.add_done_callback(retrieved)
    try:
        yield task
    finally:
        task.cancel()  # nothing, once it is done


def retrieved(future: asyncio.Future[Any]) -> None:
    """A done-callback: a future or task left behind (by an error, a cancelled waiter) is not
    reported again as "exception was never retrieved"."""
    if not future.cancelled():
        future.exception()
