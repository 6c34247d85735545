"""The one retry policy: after a failed attempt, how long to wait before the next -- or give up.

Why reads and writes differ: a read can be repeated at will; a write repeated after the site
acted is applied twice (``workspace_add`` is not idempotent: five tries, five workspaces).

* A **read** is tried again when no complete answer came (``TransportError``), when the site
  failed (``ServerError``) or asked to slow down (``RateLimited``); never after any other
  refusal or an unreadable answer, which would only come back the same.
* A **write** is tried again only on an answer that proves it did not happen: HTTP 429 (the
  documented rate-limit status), or a connection that was never established. Never because
  of words in a message ("too many" may be part of a workspace's name), never after a 5xx
  (the site may have acted before failing), never once the request has left.

Either way at most ``read_attempts`` tries in all. The wait is the site's ``Retry-After``
when it sent one with a 429 or 5xx (a longer one than ``max_retry_after`` is reported, not
waited out), else exponential backoff with full jitter: a random share of
``min(backoff_max, backoff_base * 2**(n-1))`` before the n-th retry. No wait is begun that
would end past the call's deadline (``timeout``): the last error is reported instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reconciler.api.boundary import Attempt
from reconciler.api.config import ClientConfig
from reconciler.api.errors import RateLimited, ServerError, TransportError
from reconciler.api.methods import ApiMethod


class RetryPolicy:
    """Decides, for one client, whether and when a failed attempt is tried again."""

    def __init__(self, config: ClientConfig, jitter: Callable[[], float]) -> None:
        self._attempts = config.read_attempts
        self._base, self._cap = config.backoff_base, config.backoff_max
        self._max_retry_after = config.max_retry_after
        self._jitter = jitter

    def delay(
        self, method: ApiMethod[Any], outcome: Attempt, attempt: int, remaining: float
    ) -> float | None:
        """Seconds to wait before attempt ``attempt + 1``, or ``None`` to give up.

        ``remaining`` is what is left of the call's deadline, in seconds.
        """
        if outcome.error is None or attempt >= self._attempts:
            return None
        if not self._may_retry(method, outcome):
            return None
        wait = self._wait(outcome, attempt)
        return wait if wait is not None and wait < remaining else None

    @staticmethod
    def _may_retry(method: ApiMethod[Any], outcome: Attempt) -> bool:
        if method.is_write:
            return outcome.status == 429 or not outcome.sent
        return isinstance(outcome.error, TransportError | ServerError | RateLimited)

    def _wait(self, outcome: Attempt, attempt: int) -> float | None:
        told = outcome.retry_after
        if told is not None and isinstance(outcome.error, RateLimited | ServerError):
            return told if told <= self._max_retry_after else None
        return self._jitter() * min(self._cap, self._base * 2.0 ** (attempt - 1))
