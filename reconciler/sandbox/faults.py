"""Emulated misbehaviour of a real site: rate limiting, server failures, dropped connections.

Random choices come from one ``random.Random`` seeded by ``random_seed``, and a roll is only
made when its rate is above 0, so the same settings and the same sequence of calls give the
same faults -- a failing soak run can be replayed.
"""

from __future__ import annotations

import math
import random
from collections import deque

from reconciler.sandbox.errors import GENERIC_FAILURE, ApiError

RATE_LIMITED_TITLE = "Rate Limit Exceeded"
UNAVAILABLE_MESSAGE = "The site is temporarily unavailable. " + GENERIC_FAILURE


class Faults:
    """The fault state of one sandbox: the rate limiter's window and the random source."""

    def __init__(self, random_seed: int | None = None) -> None:
        self._random = random.Random(random_seed)
        self._admitted: deque[float] = deque()

    def reseed(self, random_seed: int | None) -> None:
        """Restart the random sequence (a new ``random_seed`` was set at runtime)."""
        self._random = random.Random(random_seed)

    def admit(self, now: float, limit: int) -> None:
        """Count a request against ``limit`` a second, or raise the 429 with ``Retry-After``.

        A sliding one-second window of admitted requests: refused requests do not count, so
        a client that waits ``Retry-After`` seconds gets through.
        """
        if limit <= 0:
            return
        window = self._admitted
        while window and window[0] <= now - 1.0:
            window.popleft()
        if len(window) >= limit:
            retry_after = max(1, math.ceil(window[0] + 1.0 - now))
            raise ApiError(
                429,
                f"More than {limit} requests in one second. Wait {retry_after} second(s), as "
                "the Retry-After header says, and try again.",
                title=RATE_LIMITED_TITLE,
                headers={"Retry-After": str(retry_after)},
            )
        window.append(now)

    def maybe_fail(self, rate: float) -> None:
        """With probability ``rate``, raise a 500 or 503 (before the call has any effect)."""
        if rate > 0 and self._random.random() < rate:
            if self._random.random() < 0.5:
                raise ApiError(500, GENERIC_FAILURE)
            raise ApiError(503, UNAVAILABLE_MESSAGE, headers={"Retry-After": "1"})

    def drop_after_commit(self, rate: float) -> bool:
        """With probability ``rate``: commit this write, then drop the connection unanswered."""
        return rate > 0 and self._random.random() < rate
