"""HTTPS for the sandbox: a certificate authority of its own and a server certificate it signs.

The site API is served over HTTPS only, and its signatures cover the scheme (``https://...``),
so a user who wants to try the exact signing the service requires needs an ``https://``
sandbox. ``trustme`` (python-trio) makes a throw-away authority and a certificate for the
loopback names; the authority's certificate is written as ``ca.pem`` for the client's
``--ca-file``, so nothing is trusted system-wide and nothing is verified less strictly.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

LOOPBACK_NAMES = ("127.0.0.1", "::1", "localhost")


@dataclass(frozen=True, slots=True)
class TlsFiles:
    """Where the authority's certificate (for clients) and the server's key and chain are."""

    ca: Path
    server: Path


def make_certificates(directory: Path, host: str) -> TlsFiles:
    """Write a new authority (``ca.pem``) and a server certificate for ``host`` and the
    loopback names (``server.pem``: key and chain, readable by the owner only)."""
    import trustme  # only ``--tls`` needs it

    authority = trustme.CA(organization_name="reconciler sandbox")
    names = dict.fromkeys((host, *LOOPBACK_NAMES))
    issued = authority.issue_cert(*names)
    directory.mkdir(parents=True, exist_ok=True)
    files = TlsFiles(ca=directory / "ca.pem", server=directory / "server.pem")
    authority.cert_pem.write_to_path(str(files.ca))
    descriptor = os.open(files.server, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        out.write(issued.private_key_and_cert_chain_pem.bytes())
    return files
