"""A small TCP proxy on 127.0.0.1 whose connections a test can cut, like a network that fails.

``cut()`` closes every connection through it and refuses new ones until ``heal()``: to the
client it is as if its runner lost the network; the server behind sees the connections end.

With ``finish_abandoned``, a client that goes away (a runner killed mid-request) does not end
the connection to the server: what it sent is carried out and answered there, and the answer
dropped -- as a site behind a load balancer carries out a request whose client vanished.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType


class TcpProxy:
    def __init__(
        self, target_host: str, target_port: int, *, finish_abandoned: bool = False
    ) -> None:
        self._target = (target_host, target_port)
        self._finish_abandoned = finish_abandoned
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._sockets: set[socket.socket] = set()
        self._guard = threading.Lock()
        self._cut = False
        self._closed = False
        threading.Thread(target=self._accept, name="tcp-proxy", daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self._cut:
                client.close()
                continue
            try:
                upstream = socket.create_connection(self._target)
            except OSError:
                client.close()
                continue
            with self._guard:
                self._sockets.update((client, upstream))
            pumps = ((client, upstream, self._finish_abandoned), (upstream, client, False))
            for source, sink, keep_sink in pumps:
                threading.Thread(
                    target=self._pump, args=(source, sink, keep_sink), daemon=True
                ).start()

    def _pump(self, source: socket.socket, sink: socket.socket, keep_sink: bool) -> None:
        """Copy ``source`` to ``sink`` until either ends; then close both (or, ``keep_sink``,
        the source only: the other pump closes the sink once the server has answered)."""
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        except OSError:
            pass
        for end in (source,) if keep_sink else (source, sink):
            self._close(end)

    def _close(self, end: socket.socket) -> None:
        with self._guard:
            self._sockets.discard(end)
        with contextlib.suppress(OSError):
            end.shutdown(socket.SHUT_RDWR)
        end.close()

    def cut(self) -> None:
        """Drop every connection now and refuse new ones."""
        self._cut = True
        with self._guard:
            ends = list(self._sockets)
        for end in ends:
            self._close(end)

    def heal(self) -> None:
        self._cut = False

    def close(self) -> None:
        self._closed = True
        self.cut()
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        self._listener.close()

    def __enter__(self) -> TcpProxy:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
