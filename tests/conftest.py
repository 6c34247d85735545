"""Fixtures every test gets: no proxies, no real credentials, no network beyond loopback."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from reconciler.sandbox.settings import profile_settings
from tests.support.figures import FIGURES, summary_lines, tally
from tests.support.loopback import EXAMPLE_SITE, TRANSCRIPTS, LoopbackSite, loopback_site
from tests.support.pgbouncer import pgbouncer_port, pooled_postgres_url
from tests.support.postgres import postgres_server, postgres_url, shared_run_directory
from tests.support.secret_scan import ScanReport

# the real PostgreSQL server (and PgBouncer in front of it), for the state tests
__all__ = ["pgbouncer_port", "pooled_postgres_url", "postgres_server", "postgres_url"]

_RUN = pytest.StashKey[AbstractContextManager[Path]]()
_STARTED = pytest.StashKey[float]()

_ENVIRONMENT_LEAKS = (
    "SITE_URL",
    "SITE_API_KEY",
    "SITE_API_SECRET",
    "SITE_CREDENTIALS_FILE",
    "RECONCILER_SITE_URL",
    "RECONCILER_API_KEY",
    "RECONCILER_API_SECRET",
    "RECONCILER_CREDENTIALS_FILE",
    "RECONCILER_CONFIG",
    "RECONCILER_CA_FILE",
    "SITE_CA_FILE",
    "RECONCILER_API_FORMAT",
    "RECONCILER_CONCURRENCY",
    "RECONCILER_RATE_LIMIT",
    "RECONCILER_TIMEOUT",
    "RECONCILER_LOCK_TIMEOUT",
    "RECONCILER_LOCK_LEASE",
    "RECONCILER_STATE",
    "RECONCILER_PLAN_KEY",
    "RECONCILER_NOTIFY_URL",
    "RECONCILER_TODAY",
    "CI",  # .ci/run sets it; the tool refuses silent fallbacks under it (tests set it themselves)
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)


@pytest.fixture
def anyio_backend() -> str:
    """The async tests run on asyncio (the tool's own loop), never trio."""
    return "asyncio"


@pytest.fixture
def sandbox_profile() -> str:
    """The sandbox profile of ``site``; a test whose behaviour differs on the published
    profile parametrises it over ``SANDBOX_PROFILES``, so nothing in the tool may lean on a
    message only the sandbox words (``test_profiles.py`` runs the core scenario on it)."""
    return "default"


@pytest.fixture
def site(
    request: pytest.FixtureRequest, tmp_path: Path, sandbox_profile: str
) -> Iterator[LoopbackSite]:
    """The sandbox on loopback, and the example manifest as ``site.yaml`` in its workdir
    (a module that needs another site defines its own ``site``). An ``e2e`` test, which may
    kill the command part-way, gets it in its own process, as a real site is."""
    shutil.copy(EXAMPLE_SITE, tmp_path / "site.yaml")
    settings = profile_settings(sandbox_profile)
    own_process = request.node.get_closest_marker("e2e") is not None
    with loopback_site(tmp_path, settings=settings, own_process=own_process) as running:
        yield running


@pytest.fixture(autouse=True)
def _no_interpreter_outside_e2e(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a test marked ``e2e`` starts a Python interpreter (the console script, ``python
    -m ...``): one costs most of a second, and the fast tier (``-m "not e2e and not slow"``)
    must stay fast. A test about the command's behaviour runs it in-process instead
    (``tests.support.cli_runner.run_reconciler``, or ``LoopbackSite.run``)."""
    if request.node.get_closest_marker("e2e") is not None:
        return
    start = subprocess.Popen.__init__

    def refuse_an_interpreter(process: Any, args: Any, *rest: Any, **options: Any) -> None:
        first = args[0] if isinstance(args, list | tuple) else str(args).split()[0]
        program = Path(str(first)).name
        if program.startswith("python") or program == "reconciler":
            pytest.fail(
                f"{request.node.nodeid} starts {program}: mark it @pytest.mark.e2e, or run the "
                "command in-process (tests.support.cli_runner.run_reconciler)",
                pytrace=False,
            )
        start(process, args, *rest, **options)

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse_an_interpreter)


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep a developer's or CI's site settings, records, keys and proxies out of every test
    (the PostgreSQL fixture read ``CI`` when the session began: ``support/postgres.IN_CI``)."""
    for name in _ENVIRONMENT_LEAKS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "*")


@pytest.fixture(scope="session", autouse=True)
def _no_secret_in_any_output(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """After the whole session: no secret, HMAC key or signature in any file the tests left
    (plans, state, journals, locks, logs, exports) nor in any output of the real CLI."""
    yield
    report = ScanReport().scan_tree(tmp_path_factory.getbasetemp())
    report.scan_texts((text for transcript in TRANSCRIPTS for text in transcript), "CLI output")
    tally("secret scan", files=report.files, **{"CLI outputs": report.texts})
    assert report.leaks == [], "\n".join(report.leaks)


def pytest_configure(config: pytest.Config) -> None:
    """In the process that owns the run (the xdist controller, or the only process): the
    run's shared directory, where the one PostgreSQL server of the run is started by the
    first worker that needs it; stopped in ``pytest_unconfigure``."""
    if not hasattr(config, "workerinput"):
        run = shared_run_directory()
        config.stash[_RUN] = run
        run.__enter__()


def pytest_unconfigure(config: pytest.Config) -> None:
    run = config.stash.get(_RUN, None)
    if run is not None:
        run.__exit__(None, None, None)


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_STARTED] = time.monotonic()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Soak runs only when the ``-m`` given names it: a ``-m`` replaces the default
    ``not soak``, and ``-m "e2e or slow"`` must not start an hour of soak runs. Then the
    longest tests first (``_length``; the order is stable within a class, and the same in
    every pytest-xdist worker, which xdist requires): the workers, handed one test at a time
    (``--maxschedchunk=1``), end together instead of waiting on a long test started last."""
    if "soak" not in (config.getoption("markexpr") or ""):
        soak = [item for item in items if item.get_closest_marker("soak") is not None]
        if soak:
            config.hook.pytest_deselected(items=soak)
            items[:] = [item for item in items if item.get_closest_marker("soak") is None]
    items.sort(key=_length)


def _length(item: pytest.Item) -> int:
    """How long a test takes, as a class (markers and fixtures, no timings), longest first:
    an end-to-end test marked slow (a Python environment built from the index, applies
    killed, leases and deadlines waited out); then the templates' jobs on fresh runners
    (``make_team``: a team's pipelines, seconds a job); the other slow tests; the other
    end-to-end tests; the rest."""
    slow = item.get_closest_marker("slow") is not None
    e2e = item.get_closest_marker("e2e") is not None
    if "make_team" in getattr(item, "fixturenames", ()):
        return 1
    return 0 if slow and e2e else 2 if slow else 3 if e2e else 4


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In a pytest-xdist worker: hand this worker's figures to the controller, which prints
    them (``workeroutput`` is xdist's channel from a worker back to the controller)."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["figures"] = {section: dict(counts) for section, counts in FIGURES.items()}


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    """In the xdist controller: add a finished worker's figures to the session's."""
    figures = getattr(node, "workeroutput", {}).get("figures", {})
    for section, counts in figures.items():
        tally(section, counts)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The tier this run was (its ``-m``), how many tests and how long; and the reliability
    suites' figures (runs, faults, examples), in every run's summary."""
    tier = terminalreporter.config.getoption("markexpr") or "everything"
    ran = sum(len(terminalreporter.stats.get(key, [])) for key in ("passed", "failed", "error"))
    seconds = time.monotonic() - terminalreporter.config.stash[_STARTED]
    terminalreporter.write_line(f"tier -m {tier!r}: {ran} tests in {seconds:.1f} s")
    lines = summary_lines()
    if lines:
        terminalreporter.section("reliability figures")
        for line in lines:
            terminalreporter.write_line(line)
