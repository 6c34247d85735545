"""The token bucket behind ``--rate-limit``, on a fake clock."""

from __future__ import annotations

import asyncio

import pytest

from reconciler.api.ratelimit import TokenBucket

pytestmark = pytest.mark.anyio


class FakeTime:
    """A clock that only moves when someone sleeps (sleepers one after another)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 6))
        self.now += seconds
        await asyncio.sleep(0)


async def test_requests_are_evenly_spaced_at_the_rate() -> None:
    time = FakeTime()
    bucket = TokenBucket(10, clock=time.clock, sleep=time.sleep)
    for _ in range(5):
        await bucket.acquire()
    assert time.sleeps == [0.1] * 4 and time.now == pytest.approx(0.4)


async def test_a_burst_is_allowed_then_the_rate_applies() -> None:
    time = FakeTime()
    bucket = TokenBucket(2, burst=3, clock=time.clock, sleep=time.sleep)
    for _ in range(4):
        await bucket.acquire()
    assert time.sleeps == [0.5]


async def test_idle_time_refills_but_never_beyond_the_burst() -> None:
    time = FakeTime()
    bucket = TokenBucket(1, burst=2, clock=time.clock, sleep=time.sleep)
    await bucket.acquire()
    time.now += 100
    for _ in range(3):
        await bucket.acquire()
    assert time.sleeps == [1.0]


async def test_concurrent_waiters_share_one_rate() -> None:
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    bucket = TokenBucket(4, clock=lambda: 0.0, sleep=record)  # all arrive at the same instant
    await asyncio.gather(*(bucket.acquire() for _ in range(9)))
    assert waits == [0.25 * n for n in range(1, 9)]  # each waits for its own slot


@pytest.mark.parametrize(("rate", "burst"), [(0, 1), (-1, 1), (1, 0.5)])
def test_invalid_settings(rate: float, burst: float) -> None:
    with pytest.raises(ValueError):
        TokenBucket(rate, burst=burst)
