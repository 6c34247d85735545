"""TLS over a real loopback socket: an https site must prove who it is.

The client builds its network transport by the site's scheme (an http site, loopback only,
gets a context that trusts no authority, since it never makes a TLS connection); these
tests hold the https side: a certificate that no trusted authority signed ends the call as
a ``TransportError`` saying so, before any request is sent.
"""

from __future__ import annotations

import asyncio
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from reconciler.api.client import SiteClient
from reconciler.api.config import ClientConfig, Secret
from reconciler.api.errors import TransportError


class _Answer(BaseHTTPRequestHandler):
    served = 0

    def do_GET(self) -> None:
        type(self).served += 1
        body = b'{"userInfo": {"id": 1, "username": "a"}}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return None


def _self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 that only itself vouches for (``openssl req -x509``)."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    request = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
    names = ["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"]
    subprocess.run(
        [*request, *names, "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True
    )
    return cert, key


@contextmanager
def https_server(cert: Path, key: Path) -> Iterator[str]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _user_info(url: str) -> None:
    async def call() -> None:
        config = ClientConfig(url, "some-api-key", Secret("some-api-secret"), read_attempts=1)
        async with SiteClient(config) as client:
            await client.user_info(1)

    asyncio.run(call())


def test_an_https_site_with_a_certificate_no_authority_signed_is_refused(tmp_path: Path) -> None:
    _Answer.served = 0
    with https_server(*_self_signed(tmp_path)) as url, pytest.raises(TransportError) as refused:
        _user_info(url)
    assert "certificate verify failed" in refused.value.message.lower()
    assert _Answer.served == 0


IMPORT_CHECK = """
import ssl
import reconciler.api.transport
import aiohttp.connector as connector
loaded = ssl.create_default_context().cert_store_stats()["x509_ca"]
print(loaded, connector._SSL_CONTEXT_VERIFIED.cert_store_stats()["x509_ca"])
"""


@pytest.mark.e2e
def test_importing_the_transport_leaves_the_default_authorities_to_everyone_else() -> None:
    """aiohttp's import-time default contexts are made without authorities (45 ms saved on
    every network command; the transport always brings its own context, and one of those used
    by mistake would verify nothing, so connect to nothing), while every other default context
    of the process, made after the import, loads them as before. A fresh interpreter: the
    test process may have imported aiohttp already."""
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_CHECK], capture_output=True, text=True, check=True
    )
    others, aiohttps = (int(n) for n in done.stdout.split())
    assert others > 0
    assert aiohttps == 0
