"""Logging setup: formats, levels, and the redaction that backs up the client's discipline."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
import structlog

from reconciler.api.scrub import scrub_patterns
from reconciler.logs import configure_logging, redact

SIGNATURE = "a" * 64


@pytest.fixture(autouse=True)
def _reset_structlog() -> Iterator[None]:
    yield
    structlog.reset_defaults()


def _lines(stream: io.StringIO) -> list[str]:
    return [line for line in stream.getvalue().splitlines() if line.strip()]


def test_json_format_one_object_per_event() -> None:
    stream = io.StringIO()
    configure_logging("json", verbosity=1, stream=stream)
    structlog.get_logger("t").info("api_call", method="user_info", attempt=1, outcome="ok")
    (line,) = _lines(stream)
    event = json.loads(line)
    assert event["event"] == "api_call" and event["method"] == "user_info"
    assert event["level"] == "info" and "timestamp" in event


def test_console_format_is_plain_text_without_colours_off_a_terminal() -> None:
    stream = io.StringIO()
    configure_logging("auto", verbosity=1, stream=stream)
    structlog.get_logger("t").info("api_call", method="user_info")
    (line,) = _lines(stream)
    assert "api_call" in line and "method=user_info" in line and "\x1b[" not in line


@pytest.mark.parametrize(
    ("verbosity", "shown"),
    [(0, {"warning"}), (1, {"info", "warning"}), (2, {"debug", "info", "warning"})],
)
def test_verbosity_levels(verbosity: int, shown: set[str]) -> None:
    stream = io.StringIO()
    configure_logging("json", verbosity=verbosity, stream=stream)
    log = structlog.get_logger("t")
    log.debug("d")
    log.info("i")
    log.warning("w")
    assert {json.loads(line)["level"] for line in _lines(stream)} == shown


def test_redact_masks_secret_keys_api_key_and_signatures_in_text() -> None:
    event = redact(
        None,
        "info",
        {
            "event": f"GET /api/user_info?api_key=K&signature={SIGNATURE}",
            "api_secret": "sandbox-admin-secret",
            "signature": SIGNATURE,
            "Authorization": "Bearer x",
            "api_key": "sandbox-admin-key",
            "count": 3,
        },
    )
    assert event["api_secret"] == event["signature"] == event["Authorization"] == "****"
    assert event["api_key"] == "sand…-key"
    assert SIGNATURE not in event["event"] and event["count"] == 3


def test_exceptions_are_rendered_without_locals_and_scrubbed() -> None:
    stream = io.StringIO()
    configure_logging("console", verbosity=0, stream=stream)
    secret_local = "sandbox-admin-secret"  # a rich traceback would print this local
    try:
        raise RuntimeError(f"failed at https://x/api/user_info?signature={SIGNATURE}")
    except RuntimeError:
        structlog.get_logger("t").exception("boom")
    text = stream.getvalue()
    assert "RuntimeError" in text and "boom" in text
    assert SIGNATURE not in text and secret_local not in text


def test_httpx_request_lines_are_held_back() -> None:
    configure_logging("json", verbosity=2, stream=io.StringIO())
    assert not logging.getLogger("httpx").isEnabledFor(logging.INFO)
    assert not logging.getLogger("httpcore").isEnabledFor(logging.DEBUG)


def test_scrub_text_leaves_ordinary_text_alone() -> None:
    assert scrub_patterns("user_info: no answer") == "user_info: no answer"
    assert scrub_patterns(f"x&signature={SIGNATURE}&y=1") == "x&signature=****&y=1"
