"""What a command works on: which site, where its records live, and the open connection.

The site: ``--site``, else ``RECONCILER_SITE_URL`` (or the old ``SITE_URL``), else a saved
plan's site, else the manifest's ``site.url``; or the embedded sandbox (``--sandbox``), the
sandbox's ASGI app mounted in-process with its SQLite database in ``.reconciler/sandbox/``, so
``plan``/``apply``/``drift`` can be tried and tested with no server and no credentials.

The records: ``--state``, else ``--state-dir``, else ``RECONCILER_STATE``, else ``state`` in
``reconciler.toml`` (settled into ``opts.state`` by ``cli.options``), else the manifest's
``site.state``, else ``.reconciler/`` beside the manifest (in the working directory when none
is given) -- except in CI, where that last fallback is refused (``check_records_chosen``).
Never the location a saved plan names: a plan file is untrusted input, and one that chose its
records could choose records whose key its author holds. ``apply plan.json`` is told
where the records are like every other command (``apply plan.json site/``, or
``--state``/``RECONCILER_STATE``); a plan made against other records is refused before
anything is opened (``check_plan_location``).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from reconciler import environment
from reconciler.api.client import SiteClient
from reconciler.api.config import ClientConfig, Secret, check_site_url, load_client_config
from reconciler.cli.options import SiteOptions
from reconciler.engine.planning.plan_file import PlanFile
from reconciler.engine.planning.plan_key import PlanSecret
from reconciler.engine.read.live import Progress
from reconciler.engine.workflow import OpenSite
from reconciler.environment import SITE_URL
from reconciler.errors import ConfigError, RefusedForSafety
from reconciler.logs import configure_logging
from reconciler.model import DesiredSite
from reconciler.passwords import masked, without_password
from reconciler.state.backend import Holder, RecordStore, StateLocation
from reconciler.state.files import private_directory
from reconciler.state.locate import canonical_scheme, open_records, parse_location

if TYPE_CHECKING:
    import httpx

SANDBOX_URL = "https://sandbox.invalid"
"""The embedded sandbox's address: never resolved, the transport is in-process."""

STATE_VARIABLE = environment.STATE.name


@dataclass(frozen=True, slots=True)
class SiteChoice:
    """Where a command works, before anything is opened."""

    site_url: str | None  # None: a real site whose URL the credentials step settles
    state: StateLocation
    home: Path  # the directory beside the manifest (or the working directory)
    declared_url: str | None = None  # what the manifest (or a saved plan) says the site is

    @property
    def sandbox_dir(self) -> Path:
        """The embedded sandbox's database: beside the records when they are a directory."""
        base = Path(self.state.target) if self.state.kind == "directory" else self.home
        return base / "sandbox"


def manifest_home(manifest_paths: tuple[str, ...]) -> Path:
    """The directory a manifest's relative paths (``.reconciler``, ``site.state``) start from."""
    if not manifest_paths:
        return Path.cwd()
    first = Path(manifest_paths[0])
    return (first if first.is_dir() else first.parent).resolve()


def locate(
    opts: SiteOptions,
    manifest_paths: tuple[str, ...] = (),
    *,
    manifest_site_url: str | None = None,
    manifest_state: str | None = None,
    plan: PlanFile | None = None,
) -> SiteChoice:
    """The site and the records a command means, by the precedence in the module doc."""
    home = manifest_home(manifest_paths)
    cwd = Path.cwd()
    check_records_chosen(opts, manifest_state)
    if opts.state:
        state = parse_location(opts.state, base_dir=cwd)
    elif opts.state_dir is not None:
        state = parse_location(str(opts.state_dir), base_dir=cwd)
    elif os.environ.get(STATE_VARIABLE):
        state = parse_location(os.environ[STATE_VARIABLE], base_dir=cwd)
    elif manifest_state:
        state = parse_location(manifest_state, base_dir=home)
    else:
        state = parse_location(".reconciler", base_dir=home)
    if opts.sandbox:
        if opts.site:
            raise ConfigError("Give either --site or --sandbox, not both.")
        return SiteChoice(SANDBOX_URL, state, home)
    declared = plan.site if plan else manifest_site_url
    given = opts.site or environment.read(os.environ, SITE_URL) or declared
    return SiteChoice(check_site_url(given) if given else None, state, home, declared)


def check_records_chosen(opts: SiteOptions, manifest_state: str | None) -> None:
    """In CI, refuse (exit 1) to fall back to local records nobody chose: on a fresh runner
    they start empty, and a plan would create everything again (issue 31). A set but empty
    ``RECONCILER_STATE`` is a secret missing from the CI's settings: refused too. The
    embedded sandbox (``--sandbox``) is a choice of local records: it lives in them."""
    if not environment.in_ci(os.environ):
        return
    value = os.environ.get(STATE_VARIABLE)
    explicit = opts.state or opts.state_dir is not None or manifest_state or opts.sandbox
    if value is not None and not value.strip():
        problem = f"{STATE_VARIABLE} is set but empty"
    elif value is None and not explicit:
        problem = f"{STATE_VARIABLE} is not set and nothing else says where the records are"
    else:
        return
    raise ConfigError(
        f"{problem}, and {environment.CI} is set: the tool would keep its records in "
        ".reconciler/ on this runner, which starts empty, so a plan would create everything "
        "again.",
        hint=f"Set {STATE_VARIABLE} to the records every runner shares (a postgresql:// URL, "
        "or a directory on a shared disk), or --state, site.state in the manifest or state in "
        "reconciler.toml. To keep local records on purpose, say so: --state-dir DIR (or "
        f"{STATE_VARIABLE}=DIR).",
    )


def check_plan_location(plan: PlanFile, state: StateLocation) -> None:
    """Refuse (exit 3) a saved plan made against records other than ``state``, before
    anything is opened: no directory, key or schema is ever made for an untrusted plan."""
    made_at = plan.state
    if made_at is None or _same_location(made_at, state.display):
        return
    raise RefusedForSafety(
        f"{plan.origin} was made against other records: those at {masked(made_at)}, not "
        f"those at {state.display}. A saved plan is applied only with its own records.",
        hint="Give apply the same records location as the plan (--state, RECONCILER_STATE or "
        "the manifest), or make the plan again against these records.",
    )


def _same_location(a: str, b: str) -> bool:
    def norm(text: str) -> str:
        return canonical_scheme(without_password(text.strip()))

    return norm(a) == norm(b)


def locate_saved_plan(
    opts: SiteOptions, saved: PlanFile, paths: tuple[str, ...], desired: DesiredSite | None
) -> SiteChoice:
    """The site and records for a saved plan (and the manifest it came from, if given): found
    as for any command, never from the plan file, which is refused (exit 3) if it was made
    against other records. Shared by ``apply PLAN.json`` and ``show``."""
    target = locate(
        opts,
        paths,
        manifest_site_url=desired.site_url if desired else None,
        manifest_state=desired.state if desired else None,
        plan=saved,
    )
    check_plan_location(saved, target.state)
    return target


def locate_manifest(opts: SiteOptions, paths: tuple[str, ...], desired: DesiredSite) -> SiteChoice:
    """The site and records for a manifest: what it declares, unless options say otherwise."""
    return locate(opts, paths, manifest_site_url=desired.site_url, manifest_state=desired.state)


def records_at(opts: SiteOptions, target: SiteChoice) -> RecordStore:
    """The records of the target's site; only for commands that need no connection."""
    if target.site_url is None:
        raise ConfigError("Which site? Give --site URL (or RECONCILER_SITE_URL), or --sandbox.")
    return open_records(target.state, target.site_url, lease_seconds=opts.lock_lease)


def default_seed() -> Path:
    return Path(str(resources.files("reconciler.sandbox") / "seeds" / "example.yaml"))


def _embedded_sandbox(
    sandbox_dir: Path, opts: SiteOptions
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
    private_directory(sandbox_dir)
    app = create_app(seed=seed, db_path=str(sandbox_dir / "site.db"))
    config = ClientConfig(
        site_url=SANDBOX_URL,
        api_key=admin["api_key"],
        api_secret=Secret(admin["api_secret"]),
        response_format=opts.api_format,  # type: ignore[arg-type]
        concurrency=opts.concurrency,
        rate_limit=opts.rate_limit,
    )
    if opts.timeout:
        config = replace(config, timeout=opts.timeout)
    return config, SandboxTransport(app)


def _seed_admin(seed: dict[str, Any], path: Path) -> dict[str, Any]:
    for user in seed.get("users", []):
        if user.get("admin") and user.get("api_key") and user.get("api_secret"):
            return dict(user)
    raise ConfigError(
        f"The sandbox seed {path} has no administrator with api_key and api_secret.",
        hint="Add one with admin: true, api_key and api_secret, as the shipped seed has.",
    )


@asynccontextmanager
async def open_site(
    opts: SiteOptions,
    target: SiteChoice,
    progress: Progress | None = None,
    *,
    command: str,
) -> AsyncIterator[OpenSite]:
    """The site to work on, with its client and records open for the duration of the block."""
    configure_logging(opts.log_format, opts.verbose)  # type: ignore[arg-type]
    transport: httpx.AsyncBaseTransport | None = None
    if opts.sandbox:
        config, transport = _embedded_sandbox(target.sandbox_dir, opts)
    else:
        config = load_client_config(
            opts.site,
            target.declared_url,
            str(opts.credentials) if opts.credentials else None,
            os.environ,
            response_format=opts.api_format,
            concurrency=opts.concurrency,
            rate_limit=opts.rate_limit,
            timeout=opts.timeout,
            ca_file=str(opts.ca_file) if opts.ca_file else None,
        )
    if config.site_note:
        click.echo(f"Note: {config.site_note}", err=True)
    secret = PlanSecret.from_environment(os.environ)
    records = open_records(target.state, config.site_url, lease_seconds=opts.lock_lease)
    holder = Holder.current(command)
    with records as store:
        async with SiteClient(config, transport=transport) as client:
            yield OpenSite(client, store, holder, progress, opts.lock_timeout, secret)
