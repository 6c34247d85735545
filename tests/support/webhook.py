"""A webhook receiver on loopback, standing in for a Slack-compatible incoming webhook: what
``drift --notify`` sent it, and the status it answers with."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.support.hostile_server import Reply, Request, hostile_server, text_reply


@dataclass
class Receiver:
    """A webhook receiver on loopback: what it was sent, and the status it answers with."""

    port: int
    bodies: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200

    @property
    def url(self) -> str:
        where = f"hook-user:hook-pass@127.0.0.1:{self.port}"
        return f"http://{where}/services/T0SECRETPATH?token=QUERYSECRET"

    def take(self) -> list[dict[str, Any]]:
        bodies, self.bodies = self.bodies, []
        return bodies

    def answer(self, request: Request) -> Reply:
        self.bodies.append(json.loads(request.body))
        ok = self.status == 200
        return text_reply("ok" if ok else "no: " + request.target, self.status, "text/plain")


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    state = Receiver(0)
    with hostile_server(state.answer) as server:
        state.port = int(server.url.rsplit(":", 1)[1])
        yield state
