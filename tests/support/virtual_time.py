"""Time that passes only when someone waits: the sandbox's rate-limit window and the client's
waits (``Retry-After``, backoff, ``--rate-limit``) on one clock, so a rate-limited run takes
no wall-clock time and decides exactly as it would in real time.

Each wait moves the clock forward by its own length. Waits that overlap (several calls under
way at once) therefore move it further than real time would; that only ever makes the site's
window slide sooner, never lets a call through earlier than real time would.
"""

from __future__ import annotations

import asyncio


class VirtualTime:
    def __init__(self, start: float = 1_000.0) -> None:
        self.now = start
        self.waits: list[float] = []  # every wait, in order, as the client asked for it

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += max(0.0, seconds)
        await asyncio.sleep(0)  # still a point where other tasks run, as a real wait is
