"""A loopback stand-in for the two forges' comment endpoints the CI templates call: GitHub
issue comments and GitLab merge-request notes (list with pages, create, edit, delete), and a
webhook receiver (``POST /hook``) for the nightly drift. It records what the jobs sent, and
answers only requests carrying the job's token.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class CommentsApi:
    """Comments by pull/merge request number, as the forge would keep them."""

    url: str
    token: str
    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    hooks: list[dict[str, Any]] = field(default_factory=list)  # webhook bodies (POST /hook)
    requests: list[str] = field(default_factory=list)


_GITHUB_LIST = re.compile(r"/repos/[^/]+/[^/]+/issues/(\d+)/comments$")
_GITHUB_ONE = re.compile(r"/repos/[^/]+/[^/]+/issues/comments/(\d+)$")
_GITLAB_LIST = re.compile(r"/api/v4/projects/\d+/merge_requests/(\d+)/notes$")
_GITLAB_ONE = re.compile(r"/api/v4/projects/\d+/merge_requests/(\d+)/notes/(\d+)$")


@contextmanager
def comments_api(token: str) -> Iterator[CommentsApi]:
    """A loopback HTTP server answering both forges' comment calls for ``token`` only."""
    state = CommentsApi("", token)
    next_id = iter(range(1001, 10**6))

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _authorised(self) -> bool:
            given = self.headers.get("Authorization", "").removeprefix("Bearer ")
            return token in (given, self.headers.get("PRIVATE-TOKEN"))

        def _answer(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _handle(self) -> None:
            path, _, query = self.path.partition("?")
            state.requests.append(f"{self.command} {path}")
            paging = dict(pair.split("=", 1) for pair in query.split("&") if "=" in pair)
            if not self._authorised() and path != "/hook":
                return self._answer(401, {"message": "Bad credentials"})
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if path == "/hook" and self.command == "POST":
                state.hooks.append(body)
                return self._answer(200, {"ok": True})
            listing = _GITHUB_LIST.search(path) or _GITLAB_LIST.search(path)
            one = _GITHUB_ONE.search(path) or _GITLAB_ONE.search(path)
            if listing and self.command == "GET":
                size, page = int(paging.get("per_page", 30)), int(paging.get("page", 1))
                every = state.comments.get(int(listing[1]), [])
                return self._answer(200, every[(page - 1) * size : page * size])
            if listing and self.command == "POST":
                comment = {"id": next(next_id), "body": body["body"]}
                state.comments.setdefault(int(listing[1]), []).append(comment)
                return self._answer(201, comment)
            if one and self.command in ("PATCH", "PUT", "DELETE"):
                wanted = int(one[one.lastindex or 1])
                for comments in state.comments.values():
                    for comment in comments:
                        if comment["id"] != wanted:
                            continue
                        if self.command == "DELETE":
                            comments.remove(comment)
                            self.send_response(204)
                            self.end_headers()
                            return None
                        comment["body"] = body["body"]
                        return self._answer(200, comment)
            return self._answer(404, {"message": "Not Found"})

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _handle

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
