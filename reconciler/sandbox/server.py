"""Serving the sandbox over real HTTP, and starting one for a test or a benchmark.

``serve`` runs uvicorn on a socket it binds itself, so ``--port 0`` works: the port is known
before the first request and written to the ready file once uvicorn accepts connections.
``running_sandbox`` starts ``python -m reconciler sandbox serve`` as a child process -- the
same command a user runs -- and stops it on exit, so loopback tests exercise the real server,
including dropped TCP connections. The access log (``--access-log``) masks the values of
``api_key``, ``signature`` and ``password`` in the URLs it writes: no log shows a credential.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote_plus

import uvicorn
import yaml

from reconciler.sandbox.app import SandboxApp, create_app
from reconciler.sandbox.settings import DEFAULTS, SWITCHES, SandboxSettings
from reconciler.sandbox.tls import TlsFiles


class SandboxStartError(RuntimeError):
    """A sandbox child process did not become ready; the message holds its output."""


class _Server(uvicorn.Server):
    """uvicorn's server, telling when it listens and closing the store when it stops."""

    def __init__(
        self, config: uvicorn.Config, app: SandboxApp, on_ready: Callable[[], None]
    ) -> None:
        super().__init__(config)
        self._app = app
        self._on_ready = on_ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            self._on_ready()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        await super().shutdown(sockets=sockets)
        self._app.sandbox.store.close()


_CREDENTIAL_PARAMETERS = frozenset({"api_key", "signature", "password"})
MASK = "***"


def mask_credentials(url: str) -> str:
    """``url`` with the value of every ``api_key``, ``signature`` and ``password`` masked.

    Names are compared decoded, as the sandbox reads them (``api%5Fkey`` is ``api_key``).
    """
    path, mark, query = url.partition("?")
    pairs = query.split("&") if query else []
    for index, pair in enumerate(pairs):
        name, equals, _ = pair.partition("=")
        if equals and unquote_plus(name) in _CREDENTIAL_PARAMETERS:
            pairs[index] = f"{name}={MASK}"
    return path + mark + "&".join(pairs)


class _MaskCredentials(logging.Filter):
    """Masks credentials in uvicorn's access lines, whose third argument is the URL."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) > 2 and isinstance(args[2], str):
            record.args = (*args[:2], mask_credentials(args[2]), *args[3:])
        return True


def base_url(host: str, port: int, *, tls: bool = False) -> str:
    scheme = "https" if tls else "http"
    return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"


def serve(
    *,
    host: str = "127.0.0.1",
    port: int = 8800,
    settings: SandboxSettings | None = None,
    seed: Mapping[str, Any] | None = None,
    db_path: str | None = None,
    ready_file: str | os.PathLike[str] | None = None,
    access_log: bool = False,
    on_ready: Callable[[str], None] | None = None,
    tls: TlsFiles | None = None,
) -> None:
    """Serve the sandbox until Ctrl-C or SIGTERM. ``OSError`` if the address cannot be bound.

    ``ready_file`` receives the base URL (written atomically) once connections are accepted;
    ``on_ready`` is called with it too. The access log is off by default: a benchmark at
    hundreds of requests a second would otherwise measure the terminal. With ``tls`` the
    site is served over HTTPS with that certificate (and its URL is ``https://``).
    """
    app = create_app(settings, seed=seed, db_path=db_path)
    sock = _listen(host, port)
    url = base_url(host, sock.getsockname()[1], tls=tls is not None)

    def ready() -> None:
        if ready_file is not None:
            target = Path(ready_file)
            partial = target.with_name(target.name + ".partial")
            partial.write_text(url + "\n", encoding="utf-8")
            partial.replace(target)
        if on_ready is not None:
            on_ready(url)

    http, loop = fast_stack()
    config = uvicorn.Config(
        app,
        access_log=access_log,
        log_level="info" if access_log else "warning",
        lifespan="off",
        proxy_headers=False,
        timeout_graceful_shutdown=3,
        ssl_certfile=None if tls is None else str(tls.server),
        http=http,
        loop=loop,
    )
    logging.getLogger("uvicorn.access").addFilter(_MaskCredentials())  # after Config's setup
    try:
        _Server(config, app, ready).run(sockets=[sock])
    except KeyboardInterrupt:
        pass  # uvicorn re-raises the Ctrl-C it handled; for a server it is the normal stop
    finally:
        sock.close()


def fast_stack() -> tuple[Literal["httptools", "h11"], Literal["uvloop", "asyncio"]]:
    """uvicorn's fast HTTP parser and event loop (httptools, uvloop) where installed, else its
    pure-Python ones (h11, asyncio).

    Why: every call of a benchmark costs the sandbox CPU on the same two cores as the tool;
    on h11 the sandbox spent about 1.2 ms a call, half of it parsing and writing HTTP. The
    site's behaviour is the same on either stack (its tests run on whichever is installed).
    """
    http: Literal["httptools", "h11"] = "httptools" if _importable("httptools") else "h11"
    loop: Literal["uvloop", "asyncio"] = "uvloop" if _importable("uvloop") else "asyncio"
    return http, loop


def _importable(name: str) -> bool:
    """Imported, not merely found: a broken build must not stop the sandbox."""
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


def _listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket, created with ``IPPROTO_TCP`` on purpose.

    asyncio only sets ``TCP_NODELAY`` on sockets whose ``proto`` is ``IPPROTO_TCP``, and
    accepted sockets inherit it from the listener (``socket.create_server`` leaves it 0).
    Without it, uvicorn's separate writes of head and body meet Nagle's algorithm and the
    client's delayed ACK: every response would take 40 ms.
    """
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(1024)
    except OSError:
        sock.close()
        raise
    return sock


def settings_arguments(settings: SandboxSettings | None) -> list[str]:
    """The ``sandbox serve`` options that reproduce ``settings`` (defaults left out)."""
    if settings is None:
        return []
    args: list[str] = []
    for switch in SWITCHES:
        value = getattr(settings, switch.field)
        if value == DEFAULTS[switch.field]:
            continue
        args += [switch.flag] if switch.metavar is None else [switch.flag, str(value)]
    return args


@contextlib.contextmanager
def running_sandbox(
    seed: str | os.PathLike[str] | Mapping[str, Any] | None,
    settings: SandboxSettings | None = None,
    db_path: str | os.PathLike[str] | None = None,
    *,
    log_path: str | os.PathLike[str] | None = None,
    access_log: bool = False,
    startup_timeout: float = 30.0,
    tls_dir: str | os.PathLike[str] | None = None,
) -> Iterator[str]:
    """Run ``reconciler sandbox serve`` on a free loopback port; yield its base URL.

    ``seed`` is a seed file or a seed mapping (written to a temporary file). The server's
    output (with ``access_log``, a line per request) goes to ``log_path`` (or a temporary
    file) and is quoted if it fails to start. With ``tls_dir`` it serves HTTPS, and the
    authority to trust is ``tls_dir/ca.pem``.
    """
    with tempfile.TemporaryDirectory(prefix="sandbox-") as scratch:
        command = [sys.executable, "-m", "reconciler", "sandbox", "serve", "--port", "0"]
        ready_file = Path(scratch, "ready")
        command += ["--ready-file", str(ready_file)]
        if isinstance(seed, Mapping):
            seed_file = Path(scratch, "seed.yaml")
            dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
            seed_file.write_text(yaml.dump(dict(seed), Dumper=dumper), encoding="utf-8")
            command += ["--seed", str(seed_file)]
        elif seed is not None:
            command += ["--seed", os.fspath(seed)]
        if db_path is not None:
            command += ["--db", os.fspath(db_path)]
        command += settings_arguments(settings)
        if access_log:
            command.append("--access-log")
        if tls_dir is not None:
            command += ["--tls", "--tls-dir", os.fspath(tls_dir)]
        log_file = Path(log_path) if log_path is not None else Path(scratch, "server.log")
        with open(log_file, "wb") as log:
            process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            yield _wait_until_ready(process, ready_file, log_file, startup_timeout)
        finally:
            _stop(process)


def _wait_until_ready(
    process: subprocess.Popen[bytes], ready_file: Path, log_file: Path, timeout: float
) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready_file.exists():
            return ready_file.read_text(encoding="utf-8").strip()
        if process.poll() is not None:
            break
        time.sleep(0.02)
    _stop(process)
    output = log_file.read_text(encoding="utf-8", errors="replace").strip()
    raise SandboxStartError(
        f"the sandbox did not start (exit code {process.returncode}):\n{output or '(no output)'}"
    )


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
