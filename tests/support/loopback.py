"""End-to-end support: a real sandbox server on loopback and the real ``reconciler`` command.

``LoopbackSite`` starts ``reconciler sandbox serve`` as a subprocess; ``run`` runs the
command's entry point in-process (``tests.support.cli_runner``) in the site's workdir, with
the site's URL and credentials in its environment, exactly as a pipeline would give them.
``start`` runs the installed console script as a real process, for the tests that kill it.
Direct changes "behind the manifest's back" go through the site API with the client, as any
other API user would make them.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import shutil
import ssl
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx
import uvicorn
import yaml

from reconciler.api.client import SiteClient
from reconciler.api.config import ClientConfig, Secret
from reconciler.errors import EXIT_OK
from reconciler.sandbox import server
from reconciler.sandbox.app import create_app
from reconciler.sandbox.seed import load_seed_file
from reconciler.sandbox.server import running_sandbox
from reconciler.sandbox.settings import SandboxSettings
from reconciler.sandbox.tls import make_certificates
from tests.support.cli_runner import CliOutcome, run_reconciler

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_SEED = REPO / "reconciler" / "sandbox" / "seeds" / "example.yaml"
EXAMPLE_SITE = REPO / "examples" / "site.yaml"
ADMIN_KEY = "sandbox-admin-key"
ADMIN_SECRET = "sandbox-admin-secret"
T = TypeVar("T")

TRANSCRIPTS: list[list[str]] = []
"""The transcript of every ``LoopbackSite`` of the session, for the suite-wide secret scan."""


@functools.cache
def _verify_context() -> ssl.SSLContext:
    """What httpx verifies a server with by default, made once: the tests that wait for the
    site poll ``control`` every few milliseconds."""
    return httpx.create_ssl_context()


def reconciler_command() -> list[str]:
    """The installed console script beside this interpreter (the real CLI)."""
    script = Path(sys.executable).with_name("reconciler")
    return [str(script)] if script.exists() else [shutil.which("reconciler") or "reconciler"]


@dataclass
class LoopbackSite:
    url: str
    workdir: Path
    transcript: list[str] = field(default_factory=list)  # every output, for secret scans

    def __post_init__(self) -> None:
        TRANSCRIPTS.append(self.transcript)

    @property
    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SITE_")}
        env.update(
            RECONCILER_SITE_URL=self.url,
            RECONCILER_API_KEY=ADMIN_KEY,
            RECONCILER_API_SECRET=ADMIN_SECRET,
        )
        env.pop("RECONCILER_DEBUG", None)
        return env

    def run(self, *args: str, input: str | None = None) -> CliOutcome:
        """``reconciler ARGS...`` in the workdir, against this site; its output joins the
        transcript."""
        result = run_reconciler(*args, cwd=self.workdir, env=self.env, input=input)
        self.transcript += [result.stdout, result.stderr]
        assert "Traceback" not in result.stderr, result.stderr
        return result

    def apply_until_ok(self, manifest: str, *options: str, attempts: int = 20) -> int:
        """``apply --auto-approve`` again and again, as an operator would on a faulty site,
        until one succeeds; returns how many it took."""
        for attempt in range(1, attempts + 1):
            if self.run("apply", manifest, "--auto-approve", *options).returncode == EXIT_OK:
                return attempt
        raise AssertionError(f"no apply of {manifest} succeeded in {attempts} tries")

    def start(self, *args: str) -> subprocess.Popen[str]:
        """The command started and left running: for a test that kills it part-way."""
        return subprocess.Popen(
            [*reconciler_command(), *args],
            cwd=self.workdir,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def collect(self, process: subprocess.Popen[str], timeout: float = 120) -> tuple[str, str]:
        """Wait for a started command; its output joins the transcript."""
        stdout, stderr = process.communicate(timeout=timeout)
        self.transcript += [stdout, stderr]
        return stdout, stderr

    def control(self, path: str, payload: dict[str, Any] | None = None) -> Any:
        url = f"{self.url}/_sandbox/{path}"
        verify = _verify_context()  # made once: httpx's own, which costs 25 ms a call to make
        response = (
            httpx.post(url, json=payload, verify=verify)
            if payload is not None
            else httpx.get(url, verify=verify)
        )
        response.raise_for_status()
        return response.json()

    def state(self) -> dict[str, Any]:
        return self.control("state")

    def workspaces(self) -> dict[str, dict[str, Any]]:
        return {ws["name"]: ws for ws in self.state()["workspaces"]}

    def groups(self) -> dict[str, dict[str, Any]]:
        return {g["name"]: g for g in self.state()["groups"]}

    def faults(self, **settings: Any) -> None:
        self.control("settings", settings)

    def api(self, call: Callable[[SiteClient], Awaitable[T]]) -> T:
        """Make a change through the site API directly, as a person or another tool would."""

        async def go() -> T:
            config = ClientConfig(self.url, ADMIN_KEY, Secret(ADMIN_SECRET))
            async with SiteClient(config) as client:
                return await call(client)

        return asyncio.run(go())

    def write_manifest(self, name: str, manifest: dict[str, Any] | str) -> Path:
        path = self.workdir / name
        text = manifest if isinstance(manifest, str) else yaml.safe_dump(manifest, sort_keys=False)
        path.write_text(text, encoding="utf-8")
        return path


@contextmanager
def loopback_site(
    workdir: Path,
    seed: Path | dict[str, Any] = EXAMPLE_SEED,
    settings: SandboxSettings | None = None,
    *,
    own_process: bool = False,
) -> Iterator[LoopbackSite]:
    """The sandbox served over loopback from a thread of this process, for one test.

    It is the server ``reconciler sandbox serve`` runs (the same uvicorn server class, socket
    and settings, connections dropped at the TCP level), without a second of interpreter
    start-up per site; ``tests/test_sandbox_server.py`` covers the command itself. Its log
    goes beside the outputs, for the secret scan.

    ``own_process``: ``sandbox serve`` as a child process instead, for a test that kills
    applies: a site keeps its own pace, and a thread of a busy test process may carry a
    killed apply's last write out only after the next apply started (a race the tool cannot
    see for group members).
    """
    log = workdir / "sandbox-server.log"
    if own_process:
        given = seed if isinstance(seed, dict) else str(seed)
        with running_sandbox(given, settings, log_path=log) as url:
            yield LoopbackSite(url, workdir)
        return
    with serving_in_thread(seed, settings, log_path=log) as url:
        yield LoopbackSite(url, workdir)


@contextmanager
def serving_in_thread(
    seed: Path | Mapping[str, Any],
    settings: SandboxSettings | None,
    *,
    log_path: Path,
    clock: Callable[[], float] | None = None,
    db_path: Path | None = None,
    tls_dir: Path | None = None,
) -> Iterator[str]:
    """``sandbox serve --port 0`` as the command runs it, in a thread; yields the base URL.

    The app is built in the server's thread (its SQLite store belongs to that thread) from
    the seed as the command reads it: a seed file is checked by ``load_seed_file``, with the
    duplicate-names switch given beside it. ``clock`` is its rate limiter's clock; ``db_path``
    its SQLite file (else in memory); with ``tls_dir`` it serves HTTPS, as ``--tls`` does,
    and the authority to trust is ``tls_dir/ca.pem``.
    """
    ready, stopped = threading.Event(), threading.Event()
    found: dict[str, Any] = {}

    def run() -> None:
        try:
            duplicates = True if settings and settings.allow_duplicate_workspace_names else None
            data = (
                dict(seed)
                if isinstance(seed, Mapping)
                else load_seed_file(seed, allow_duplicate_workspace_names=duplicates)
            )
            app = create_app(settings, seed=data, db_path=None if db_path is None else str(db_path))
            if clock is not None:
                app.sandbox.clock = clock
            certificates = None if tls_dir is None else make_certificates(tls_dir, "127.0.0.1")
            sock = server._listen("127.0.0.1", 0)
            http, loop = server.fast_stack()
            config = uvicorn.Config(
                app, log_config=None, log_level="warning", lifespan="off",
                proxy_headers=False, timeout_graceful_shutdown=1, access_log=False,
                ssl_certfile=None if certificates is None else str(certificates.server),
                http=http, loop=loop,
            )  # fmt: skip
            port = sock.getsockname()[1]
            found["url"] = server.base_url("127.0.0.1", port, tls=tls_dir is not None)
            found["server"] = uvicorn_server = server._Server(config, app, ready.set)
            with sock:
                uvicorn_server.run(sockets=[sock])
        except BaseException as exc:  # reported to the test that waits for the site
            found["error"] = exc
        finally:
            ready.set()
            stopped.set()

    log = logging.FileHandler(log_path, encoding="utf-8")
    uvicorn_logger = logging.getLogger("uvicorn")
    uvicorn_logger.addHandler(log)
    thread = threading.Thread(target=run, name="sandbox server", daemon=True)
    thread.start()
    try:
        ready.wait()
        if "error" in found:
            raise RuntimeError("the sandbox did not start") from found["error"]
        yield found["url"]
    finally:
        if "server" in found:
            found["server"].should_exit = True
        thread.join()
        uvicorn_logger.removeHandler(log)
        log.close()


SANDBOX_PROFILES = ("default", "published")
"""The sandbox profiles a test runs against when its behaviour differs on the published one
(the published run covers code the default run does not: compare coverage by test context)."""
