"""Structured logging: one event per API call, readable on a terminal, JSON for machines.

``configure_logging`` sets structlog up to write to stderr (stdout belongs to plans and
reports). Verbosity 0 (the default) shows only warnings that concern the whole run (an apply
lock taken over): nothing per call, so an expected failure -- a wrong secret, an unreachable
site -- ends as the command's one error message. 1 (``-v``) adds one info event per request,
retries and failures included; 2 (``-vv``) debug.

Secrets are kept out by construction -- the client never hands the secret or a signature to
the logger, and scrubs what the site says before it is logged -- and, as defence in depth, by
:func:`redact`: any key named like a secret or a signature is replaced, ``api_key`` values
are masked, credential parameters and signature-shaped hex in any text are cut
(``reconciler.api.scrub``), and tracebacks are rendered as plain text (never with local
variables) and scrubbed the same way. The stdlib loggers of httpx and httpcore, which print
full request URLs (signature included) at INFO and DEBUG, and aiohttp's, are held at WARNING.
"""

from __future__ import annotations

import logging
import re
import sys
import traceback
from collections.abc import MutableMapping
from typing import Any, Literal, TextIO

import structlog
from structlog.typing import EventDict, Processor, WrappedLogger

from reconciler.api.config import MASK, mask_key
from reconciler.api.scrub import scrub_patterns

LogFormat = Literal["auto", "console", "json"]

_SECRET_KEY = re.compile(r"secret|signature|password|passwd|token|authorization", re.IGNORECASE)
_QUIET_LOGGERS = ("httpx", "httpcore", "hpack", "aiohttp")


def redact(_logger: WrappedLogger, _name: str, event_dict: EventDict) -> EventDict:
    """Structlog processor: no secret, signature or full API key leaves through a log event."""
    _render_exception(event_dict)
    for key in list(event_dict):
        value = event_dict[key]
        if _SECRET_KEY.search(key):
            event_dict[key] = MASK
        elif key == "api_key" and isinstance(value, str):
            event_dict[key] = mask_key(value)
        elif isinstance(value, str):
            event_dict[key] = scrub_patterns(value)
    return event_dict


def _render_exception(event_dict: MutableMapping[str, Any]) -> None:
    """Turn ``exc_info`` into plain traceback text, so no renderer can show frame locals."""
    exc_info = event_dict.pop("exc_info", None)
    if exc_info is True:
        exc_info = sys.exc_info()
    elif isinstance(exc_info, BaseException):
        exc_info = (type(exc_info), exc_info, exc_info.__traceback__)
    if isinstance(exc_info, tuple) and exc_info[0] is not None:
        event_dict["exception"] = "".join(traceback.format_exception(*exc_info))


def _level(verbosity: int) -> int:
    return {0: logging.WARNING, 1: logging.INFO}.get(verbosity, logging.DEBUG)


def _renderer(log_format: LogFormat, stream: TextIO) -> Processor:
    if log_format == "json":
        return structlog.processors.JSONRenderer(sort_keys=True)
    is_tty = bool(getattr(stream, "isatty", lambda: False)())
    return structlog.dev.ConsoleRenderer(
        colors=is_tty, exception_formatter=structlog.dev.plain_traceback
    )


def configure_logging(
    log_format: LogFormat = "auto", verbosity: int = 0, stream: TextIO | None = None
) -> None:
    """Configure structlog for the whole process; call once from the CLI (tests may re-call).

    ``auto`` and ``console`` render for people (colours on a terminal only); ``json`` renders
    one JSON object a line. ``stream`` defaults to the ``sys.stderr`` of the moment.
    """
    target = sys.stderr if stream is None else stream
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            redact,
            _renderer(log_format, target),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_level(verbosity)),
        logger_factory=structlog.PrintLoggerFactory(file=target),
        cache_logger_on_first_use=False,
    )
    for name in _QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
