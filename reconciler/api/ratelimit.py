"""An async rate limiter shared by every call of one client.

``--rate-limit N`` promises the site at most N requests a second, whatever the concurrency.
It is a token bucket in its "virtual scheduling" form (GCRA): each caller reserves the next
free slot at once and sleeps until it comes. Reserving before sleeping keeps callers in
arrival order without a lock, and there is no refill loop whose float rounding could spin.
``burst`` 1 (the default) spaces requests evenly, so a site that counts per second never
sees a burst; a larger burst lets that many go at once after an idle period.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable


class TokenBucket:
    """At most ``rate`` acquisitions a second on average, ``burst`` at once."""

    def __init__(
        self,
        rate: float,
        *,
        burst: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("a token bucket needs rate > 0 and burst >= 1")
        self.rate = rate
        self.burst = burst
        self._interval = 1.0 / rate
        self._tolerance = (burst - 1) * self._interval
        self._clock = clock
        self._sleep = sleep
        self._next_slot = clock()  # the theoretical time of the next acquisition

    async def acquire(self) -> None:
        """Reserve the next slot, then wait until it comes (no wait when it already has)."""
        now = self._clock()
        slot = max(self._next_slot, now)
        self._next_slot = slot + self._interval
        wait = slot - self._tolerance - now
        if wait > 0:
            await self._sleep(wait)
