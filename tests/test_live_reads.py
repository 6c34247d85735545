"""How a full read sends the workspaces' details: together, not after a first answer.

The first ``workspace_info`` answer says whether the site tells at all (a site may refuse the
method; members are then read with ``user_info``). The other calls used to wait for it: a
round trip, behind ``users_location_access`` on a large site, that held the read's other
slots idle. The real engine and client against the in-process sandbox
(``tests/support/engine_site.py``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from reconciler.engine.read.live import LiveReader
from reconciler.model import LiveSite
from reconciler.sandbox.settings import SandboxSettings
from reconciler.sandbox.synthetic import synthetic_seed
from tests.support.engine_site import EngineSite, engine_site

CONCURRENCY = 4


def _watch_details(site: EngineSite, events: list[str], answer_after: float) -> None:
    """Record each ``workspace_info`` request as it leaves and as its answer comes back; the
    site takes ``answer_after`` seconds over each."""
    forward = site.tap.handle_async_request

    async def watched(request: httpx.Request) -> httpx.Response:
        if site.tap.method_of(request) != "workspace_info":
            return await forward(request)
        events.append("sent")
        await asyncio.sleep(answer_after)
        try:
            return await forward(request)
        finally:
            events.append("answered")

    site.tap.handle_async_request = watched  # type: ignore[method-assign]


def _read(tmp_path: Path, settings: SandboxSettings | None = None) -> tuple[LiveSite, list[str]]:
    events: list[str] = []

    async def run() -> LiveSite:
        seed = synthetic_seed(users=60, workspaces=12, groups=2)
        async with engine_site(seed, tmp_path, settings, concurrency=CONCURRENCY) as site:
            _watch_details(site, events, answer_after=0.05)
            return await LiveReader(site.client).read(None)

    return asyncio.run(run()), events


def test_the_details_leave_together_without_waiting_for_the_first_answer(
    tmp_path: Path,
) -> None:
    live, events = _read(tmp_path)
    assert len(live.workspaces) >= 3 and all(ws.details_observed for ws in live.workspaces)
    first_answer = events.index("answered")
    assert events[:first_answer].count("sent") > 1, events  # others left beside the first
    assert events.count("sent") == len(live.workspaces)


def test_a_site_that_refuses_the_details_gets_few_of_them(
    tmp_path: Path,
) -> None:
    """The calls still waiting for a slot when the first refusal comes are dropped: those in
    flight then, and, for each of them, one that took the slot its answer freed before the
    answer was read (an answer is decoded after its slot is given back: the next call goes
    out first, issue 47) -- at most twice the concurrency, of many more workspaces."""
    live, events = _read(tmp_path, SandboxSettings(refuse_workspace_info=True))
    assert any("refuses workspace_info" in note for note in live.notes)
    assert 1 <= events.count("sent") <= 2 * CONCURRENCY < len(live.workspaces), events
