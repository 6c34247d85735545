"""The event loop the commands run on: uvloop's where installed, else asyncio's own.

Why: a large plan's read is bound by the tool's CPU (two cores, shared with the site in every
benchmark), and uvloop's loop -- libuv, in C -- spends about a tenth less of it a call than
asyncio's selector loop written in Python (``bench/bench_http_stack.py``). Nothing here
depends on which loop runs: the same coroutines, the same cancellation on Ctrl-C
(``asyncio.Runner`` handles the signal for either).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


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
