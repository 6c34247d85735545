"""Open the site a command works on: a real site, or the embedded sandbox.

The embedded sandbox (``--sandbox``) is the sandbox's ASGI app mounted in-process, its SQLite
database under the state directory, so ``plan``/``apply``/``drift`` can be tried and tested
with no server and no credentials.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import httpx

from reconciler.api.client import SiteClient
from reconciler.api.config import ClientConfig, Secret, check_site_url, load_client_config
from reconciler.cli.options import SiteOptions
from reconciler.engine.live import Progress
from reconciler.engine.plan_file import PlanFile, read_plan_file
from reconciler.engine.workflow import Site
from reconciler.errors import ConfigError, ReconcilerError
from reconciler.logs import configure_logging
from reconciler.state.backend import Holder, SiteRecords
from reconciler.state.directory import DirectoryRecords
from reconciler.state.files import private_directory

SANDBOX_URL = "https://sandbox.invalid"
"""The embedded sandbox's address: never resolved, the transport is in-process."""


def state_dir_for(opts: SiteOptions, manifest_paths: tuple[str, ...]) -> Path:
    """``--state-dir``, or ``.reconciler/`` beside the (first) manifest, or in the cwd."""
    if opts.state_dir is not None:
        return opts.state_dir
    if manifest_paths:
        first = Path(manifest_paths[0])
        return (first if first.is_dir() else first.parent) / ".reconciler"
    return Path(".reconciler")


def read_plan(path: Path) -> PlanFile:
    """A saved plan file, read but not yet trusted (``workflow.apply_saved`` checks it)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReconcilerError(f"Cannot read the plan file {path}: {exc}.") from None
    return read_plan_file(text, str(path))


def default_seed() -> Path:
    return Path(str(resources.files("reconciler.sandbox") / "seeds" / "example.yaml"))


def _embedded_sandbox(
    state_dir: Path, opts: SiteOptions
) -> tuple[ClientConfig, httpx.AsyncBaseTransport]:
    from reconciler.sandbox.app import create_app
    from reconciler.sandbox.seed import load_seed_file
    from reconciler.sandbox.transport import SandboxTransport

    seed_path = opts.sandbox_seed or default_seed()
    try:
        seed = load_seed_file(str(seed_path))
    except ValueError as exc:
        raise ConfigError(f"The sandbox seed {seed_path} is not usable: {exc}") from None
    admin = _seed_admin(seed, seed_path)
    db_dir = state_dir / "sandbox"
    private_directory(db_dir)
    app = create_app(seed=seed, db_path=str(db_dir / "site.db"))
    config = ClientConfig(
        site_url=SANDBOX_URL,
        api_key=admin["api_key"],
        api_secret=Secret(admin["api_secret"]),
        response_format=opts.api_format,  # type: ignore[arg-type]
        concurrency=opts.concurrency,
        rate_limit=opts.rate_limit,
    )
    return config, SandboxTransport(app)


def _seed_admin(seed: dict[str, Any], path: Path) -> dict[str, Any]:
    for user in seed.get("users", []):
        if user.get("admin") and user.get("api_key") and user.get("api_secret"):
            return dict(user)
    raise ConfigError(
        f"The sandbox seed {path} has no administrator with api_key and api_secret.",
        hint="Add one, as examples/sandbox-seed.yaml does.",
    )


def records_for(opts: SiteOptions, manifest_paths: tuple[str, ...], site_url: str) -> SiteRecords:
    """Where the records of ``site_url`` live, as the options and the manifest say."""
    return DirectoryRecords(state_dir_for(opts, manifest_paths), site_url)


def state_store_for(
    opts: SiteOptions, manifest_paths: tuple[str, ...], manifest_site_url: str | None
) -> SiteRecords:
    """The records of the site the options name, without opening a connection."""
    if opts.sandbox:
        url = SANDBOX_URL
    else:
        given = opts.site or os.environ.get("SITE_URL") or manifest_site_url
        if not given:
            raise ConfigError("Which site? Give --site URL (or SITE_URL), or --sandbox.")
        url = check_site_url(given)
    return records_for(opts, manifest_paths, url)


@asynccontextmanager
async def open_site(
    opts: SiteOptions,
    manifest_paths: tuple[str, ...] = (),
    manifest_site_url: str | None = None,
    progress: Progress | None = None,
    *,
    command: str = "",
) -> AsyncIterator[Site]:
    """The site to work on, with its client open for the duration of the block."""
    configure_logging(opts.log_format, opts.verbose)  # type: ignore[arg-type]
    state_dir = state_dir_for(opts, manifest_paths)
    transport: httpx.AsyncBaseTransport | None = None
    if opts.sandbox:
        if opts.site:
            raise ConfigError("Give either --site or --sandbox, not both.")
        config, transport = _embedded_sandbox(state_dir, opts)
    else:
        config = load_client_config(
            opts.site,
            manifest_site_url,
            str(opts.credentials) if opts.credentials else None,
            os.environ,
            response_format=opts.api_format,
            concurrency=opts.concurrency,
            rate_limit=opts.rate_limit,
        )
    holder = Holder.current(command or "reconciler")
    with records_for(opts, manifest_paths, config.site_url) as store:
        async with SiteClient(config, transport=transport) as client:
            yield Site(client, store, holder, progress)
