"""The real engine against an in-process sandbox: the workflow functions, a real ``SiteClient``
over ``SandboxTransport`` and the directory state backend in a directory of the test's.

Nothing is mocked and nothing is copied: ``apply`` calls ``workflow.apply_manifest``, the same
function ``reconciler apply`` calls. It is the fast path for property-based and fault runs,
where the real CLI in a subprocess would cost a second a run.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from reconciler.api.client import SiteClient
from reconciler.api.config import ClientConfig, Secret
from reconciler.core.planning import PlanOptions
from reconciler.core.records import Records
from reconciler.engine import workflow
from reconciler.engine.apply.executor import ApplyReport, Executor
from reconciler.engine.planning.plan import Plan
from reconciler.engine.planning.safety import RunCheck
from reconciler.engine.records import ledger
from reconciler.engine.workflow import AutoApprove, LoadedManifest, OpenSite
from reconciler.model import DesiredSite
from reconciler.sandbox.app import SandboxApp, create_app
from reconciler.sandbox.control import dump_state
from reconciler.sandbox.settings import SandboxSettings
from reconciler.sandbox.transport import SandboxTransport
from reconciler.state.backend import Holder, RecordStore
from reconciler.state.directory import DirectoryRecords
from tests.support.loopback import ADMIN_KEY, ADMIN_SECRET
from tests.support.virtual_time import VirtualTime

SITE_URL = "https://sandbox.example"
INJECTED_FAILURE = b"Please try again or contact customer support"
RATE_LIMITED = b"Rate Limit Exceeded"


class FaultTap(httpx.AsyncBaseTransport):
    """Passes every request on to the sandbox and counts the faults that come back.

    A fault is a dropped connection, an injected 500/503 or a 429, whatever the HTTP status
    says (``errors_as_200`` answers them all with 200).
    """

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.seen: Counter[str] = Counter()
        # A site that answers otherwise than it did: (API method, body) -> body; or that
        # answers without doing anything: API method -> (status, body), None to pass it on.
        self.lie: Callable[[str, bytes], bytes] | None = None
        self.instead: Callable[[str], tuple[int, bytes] | None] = lambda method: None
        # A slow site: API method -> seconds it takes before it carries the request out. The
        # request goes on even when the client has given up waiting (``late`` keeps it).
        self.slow: Callable[[str], float] = lambda method: 0.0
        self.late: list[asyncio.Task[httpx.Response]] = []

    def method_of(self, request: httpx.Request) -> str:
        return request.url.path.rsplit("/", 1)[-1].removesuffix(".xml")

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        pause = self.slow(self.method_of(request))
        if pause:
            body = await request.aread()
            copy = httpx.Request(request.method, request.url, headers=request.headers, content=body)

            async def later() -> httpx.Response:
                await asyncio.sleep(pause)
                return await self._forward(copy)

            task = asyncio.ensure_future(later())
            self.late.append(task)
            return await asyncio.shield(task)
        return await self._forward(request)

    async def _forward(self, request: httpx.Request) -> httpx.Response:
        scripted = self.instead(self.method_of(request))
        if scripted is not None:
            status, content = scripted
            headers = {"Content-Type": "application/json"}
            return httpx.Response(status, headers=headers, content=content, request=request)
        try:
            response = await self.inner.handle_async_request(request)
        except httpx.TransportError:
            self.seen["dropped connections"] += 1
            raise
        body = await response.aread()
        if RATE_LIMITED in body:
            self.seen["rate limited (429)"] += 1
        elif INJECTED_FAILURE in body:
            self.seen["server failures (500/503)"] += 1
        if response.status_code == 200 and body.startswith(b'{"error"'):
            self.seen["errors answered with 200"] += 1
        if self.lie is not None:  # a site that answers otherwise than it did
            body = self.lie(self.method_of(request), body)
            headers = [(k, v) for k, v in response.headers.items() if k != "content-length"]
            return httpx.Response(
                response.status_code, headers=headers, content=body, request=request
            )
        return httpx.Response(
            response.status_code, headers=response.headers, content=body, request=request
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


async def short_sleep(seconds: float) -> None:
    """The client's waits (backoff, ``Retry-After``) shortened, for sites with no rate limit.

    The client still decides when and how often to try again; only the clock is compressed,
    so a fault run with hundreds of injected 503s (``Retry-After: 1``) takes seconds.
    """
    await asyncio.sleep(min(seconds, 0.001))


@dataclass(frozen=True, slots=True)
class ApplyOutcome:
    """What one ``apply`` did: the plan it made and, when it ran one, the executor's report."""

    plan: Plan
    report: ApplyReport | None

    @property
    def complete(self) -> bool:
        return self.report is None or self.report.complete


@dataclass
class EngineSite:
    """One sandbox site and the engine's view of it."""

    app: SandboxApp
    client: SiteClient
    store: RecordStore
    tap: FaultTap

    @property
    def site(self) -> OpenSite:
        return OpenSite(self.client, self.store, Holder.current("apply (test)"))

    def dump(self) -> dict[str, Any]:
        """The whole site as the sandbox holds it (group members and settings included)."""
        return dump_state(self.app.sandbox)

    def records(self) -> Records:
        return ledger.read(self.store).records

    def set_faults(self, **settings: Any) -> None:
        self.app.sandbox.update_settings(settings)

    async def plan(self, desired: DesiredSite, options: PlanOptions | None = None) -> Plan:
        return await workflow.make_plan(
            LoadedManifest(desired), self.site, options or PlanOptions()
        )

    async def apply(self, desired: DesiredSite, options: PlanOptions | None = None) -> ApplyOutcome:
        """``reconciler apply MANIFEST --auto-approve``; ``RefusedForSafety`` when a guard trips."""
        result = await workflow.apply_manifest(
            LoadedManifest(desired), self.site, options or PlanOptions(), AutoApprove()
        )
        return ApplyOutcome(result.plan, result.report)

    async def adopt(self, desired: DesiredSite) -> None:
        """``reconciler adopt MANIFEST``: record the declared objects the site already has."""
        await workflow.adopt(LoadedManifest(desired), self.site)

    async def execute(self, plan: Plan, desired: DesiredSite) -> ApplyReport:
        """Carry out ``plan`` as it stands, with no staleness check: what happens when the site
        changes between an apply's read and its writes (another administrator at work)."""
        with ledger.locked(self.store, self.site.holder) as state:
            executor = Executor(
                self.client, state.records, state.journal(), RunCheck(desired, plan.options)
            )
            try:
                return await executor.run(plan.actions)
            finally:
                state.save(executor.records, "test: executed a plan as it stood")


@asynccontextmanager
async def engine_site(
    seed: Mapping[str, Any],
    state_dir: Path,
    settings: SandboxSettings | None = None,
    *,
    waits_on: VirtualTime | None = None,
    **client_options: Any,
) -> AsyncIterator[EngineSite]:
    """A fresh in-memory sandbox seeded with ``seed``, and the engine's client and records.

    ``waits_on``: the client's waits move that clock, which the site's rate limiter shares
    (a rate-limited site in no wall-clock time); otherwise they are shortened (``short_sleep``).
    """
    app = create_app(settings, seed=seed)
    options = {"backoff_base": 0.01, **client_options}
    sleep = options.pop("sleep", short_sleep)
    timing: dict[str, Any] = {"sleep": sleep}
    if waits_on is not None:
        app.sandbox.clock = waits_on.monotonic
        timing = {"sleep": waits_on.sleep, "monotonic": waits_on.monotonic}
    config = ClientConfig(SITE_URL, ADMIN_KEY, Secret(ADMIN_SECRET), **options)
    tap = FaultTap(SandboxTransport(app))
    try:
        async with SiteClient(config, transport=tap, **timing) as client:
            with DirectoryRecords(state_dir, SITE_URL) as store:
                yield EngineSite(app, client, store, tap)
    finally:
        app.sandbox.store.close()
