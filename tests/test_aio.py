"""The commands' event loop (``reconciler.aio``): a command's result comes back whole, and is
never written out by the loop's own bookkeeping; work done meanwhile lets the answers in."""

from __future__ import annotations

import asyncio
import time

import pytest

from reconciler import aio


class Report:
    """A result whose ``repr`` is counted: a large site's access report or plan, whose
    dataclass ``repr`` writes out every field of some 40,000 objects (0.2 s)."""

    def __init__(self) -> None:
        self.reprs = 0

    def __repr__(self) -> str:
        self.reprs += 1
        return "Report(...)"


def test_the_result_comes_back_and_is_never_written_out() -> None:
    """``asyncio.Runner``, leaving, asks ``signal.getsignal(SIGINT)``; Python 3.11 formats the
    handler's ``repr`` on the way, and the handler holds the main task with its result."""
    report = Report()

    async def command() -> Report:
        return report

    assert aio.run(command()) is report
    assert report.reprs == 0


def test_an_error_leaves_as_raised() -> None:
    async def failing() -> None:
        raise LookupError("the site has no such workspace")

    with pytest.raises(LookupError, match="the site has no such workspace"):
        aio.run(failing())


def test_work_done_in_slices_lets_the_loop_answer_meanwhile() -> None:
    """Each item takes a third of a slice: the loop is handed back while the work goes on,
    so an answer that comes in meanwhile is read before all of it is done."""
    answered_after: list[int] = []
    done: list[int] = []

    def work(item: int) -> int:
        time.sleep(aio.SLICE_SECONDS / 3)
        done.append(item)
        return item * item

    async def answer() -> None:
        answered_after.append(len(done))

    async def command() -> list[int]:
        asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(answer()))
        return await aio.in_slices(range(30), work)

    assert aio.run(command()) == [item * item for item in range(30)]
    assert answered_after and answered_after[0] < 30


def test_work_started_meanwhile_is_cancelled_when_the_block_fails() -> None:
    async def never() -> None:
        await asyncio.Event().wait()

    async def command() -> asyncio.Future[None]:
        with pytest.raises(LookupError):
            async with aio.meanwhile(never()) as task:
                await asyncio.sleep(0)
                raise LookupError("the site has no such workspace")
        await asyncio.sleep(0)
        return task

    assert aio.run(command()).cancelled()


def test_work_started_meanwhile_gives_its_result_to_the_block() -> None:
    async def square(value: int) -> int:
        await asyncio.sleep(0)
        return value * value

    async def command() -> int:
        async with aio.meanwhile(square(7)) as task:
            return await task

    assert aio.run(command()) == 49
