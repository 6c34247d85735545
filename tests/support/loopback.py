"""End-to-end support: a real sandbox server on loopback and the real ``reconciler`` command.

``LoopbackSite`` starts ``reconciler sandbox serve`` as a subprocess; ``run`` invokes the
installed console script in another subprocess with the site's URL and credentials in its
environment, exactly as a pipeline would. Direct changes "behind the manifest's back" go
through the site API with the client, as any other API user would make them.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx
import yaml

from reconciler.api.client import SiteClient
from reconciler.api.config import ClientConfig, Secret
from reconciler.errors import EXIT_OK
from reconciler.sandbox.server import running_sandbox
from reconciler.sandbox.settings import SandboxSettings

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_SEED = REPO / "reconciler" / "sandbox" / "seeds" / "example.yaml"
EXAMPLE_SITE = REPO / "examples" / "site.yaml"
ADMIN_KEY = "sandbox-admin-key"
ADMIN_SECRET = "sandbox-admin-secret"
T = TypeVar("T")

TRANSCRIPTS: list[list[str]] = []
"""The transcript of every ``LoopbackSite`` of the session, for the suite-wide secret scan."""


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

    def run(
        self, *args: str, input: str | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [*reconciler_command(), *args],
            cwd=self.workdir,
            env=self.env,
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
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
        response = httpx.post(url, json=payload) if payload is not None else httpx.get(url)
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
) -> Iterator[LoopbackSite]:
    server_log = workdir / "sandbox-server.log"  # beside the outputs, for the secret scan
    with running_sandbox(
        seed if isinstance(seed, dict) else str(seed), settings, log_path=server_log
    ) as url:
        yield LoopbackSite(url, workdir)


SANDBOX_PROFILES = ("default", "published")
"""The sandbox profiles the engine's end-to-end and pipeline tests run against."""
