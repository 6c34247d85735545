"""A loopback stand-in for the two forges' comment endpoints the CI templates call: GitHub
issue comments and GitLab merge-request notes (list with pages, create, edit, delete), GitLab's
``GET /user``, and a webhook receiver (``POST /hook/SECRET``) for the nightly drift.

Every comment has an author, as on the forges: the identity of the token that wrote it
(GitHub answers it as ``user.login``, GitLab as ``author.id``). The job's token is the
pipeline's own identity (``github-actions[bot]`` on GitHub, a project bot user on GitLab);
``post_as`` lets a test add a comment by someone else, as a person on the pull request would.
Only requests carrying the job's token are answered. Like a forge token with write access to
the pull request (GitHub's ``pull-requests: write``, a GitLab maintainer's), it may edit or
delete anyone's comment: only the job's own care keeps it to the comments it wrote.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PIPELINE_LOGIN = "github-actions[bot]"
"""The author of comments made with a GitHub Actions job's own token."""
PIPELINE_BOT_ID = 77
PIPELINE_BOT = {"id": PIPELINE_BOT_ID, "username": "project_42_bot_5f1c"}
"""The user of a GitLab project access token: what ``GET /user`` answers for it."""


@dataclass(frozen=True)
class Author:
    login: str
    user_id: int


PIPELINE = Author(PIPELINE_LOGIN, PIPELINE_BOT_ID)


@dataclass
class CommentsApi:
    """Comments by pull/merge request number, as the forge would keep them."""

    url: str
    token: str
    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    hooks: list[dict[str, Any]] = field(default_factory=list)  # webhook bodies (POST /hook/…)
    requests: list[str] = field(default_factory=list)
    _ids: Iterator[int] = field(default_factory=lambda: iter(range(1001, 10**6)))

    def post_as(self, author: Author, number: int, body: str) -> dict[str, Any]:
        """A comment written by ``author`` (a person, another bot), as the forge keeps it."""
        comment = {"id": next(self._ids), "body": body, "author": author}
        self.comments.setdefault(number, []).append(comment)
        return comment

    def authored(self, number: int, author: Author = PIPELINE) -> list[dict[str, Any]]:
        return [c for c in self.comments.get(number, []) if c["author"] == author]


_GITHUB_LIST = re.compile(r"/repos/[^/]+/[^/]+/issues/(\d+)/comments$")
_GITHUB_ONE = re.compile(r"/repos/[^/]+/[^/]+/issues/comments/(\d+)$")
_GITLAB_LIST = re.compile(r"/api/v4/projects/\d+/merge_requests/(\d+)/notes$")
_GITLAB_ONE = re.compile(r"/api/v4/projects/\d+/merge_requests/(\d+)/notes/(\d+)$")


def _shape(comment: dict[str, Any], gitlab: bool) -> dict[str, Any]:
    """A comment as the forge answers it: GitHub names its author ``user``, GitLab ``author``."""
    author: Author = comment["author"]
    if gitlab:
        return {
            "id": comment["id"],
            "body": comment["body"],
            "system": False,
            "author": {"id": author.user_id, "username": author.login},
        }
    kind = "Bot" if author.login.endswith("[bot]") else "User"
    return {
        "id": comment["id"],
        "body": comment["body"],
        "user": {"login": author.login, "id": author.user_id, "type": kind},
    }


@contextmanager
def comments_api(token: str) -> Iterator[CommentsApi]:
    """A loopback HTTP server answering both forges' comment calls; ``token`` is the
    pipeline's (its comments are the pipeline identity's)."""
    state = CommentsApi("", token)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _caller(self) -> Author | None:
            given = self.headers.get("Authorization", "").removeprefix("Bearer ")
            return PIPELINE if token in (given, self.headers.get("PRIVATE-TOKEN")) else None

        def _answer(self, status: int, body: Any = None) -> None:
            data = b"" if body is None else json.dumps(body).encode()
            self.send_response(status)
            if data:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _handle(self) -> None:
            path, _, query = self.path.partition("?")
            state.requests.append(f"{self.command} {path}")
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if path.startswith("/hook/") and self.command == "POST":
                state.hooks.append(body)
                return self._answer(200, {"ok": True})
            caller = self._caller()
            if caller is None:
                return self._answer(401, {"message": "Bad credentials"})
            if path == "/api/v4/user" and self.command == "GET":
                return self._answer(200, PIPELINE_BOT)
            gitlab = path.startswith("/api/v4/")
            listing = _GITHUB_LIST.search(path) or _GITLAB_LIST.search(path)
            if listing and self.command == "GET":
                paging = dict(pair.split("=", 1) for pair in query.split("&") if "=" in pair)
                size, page = int(paging.get("per_page", 30)), int(paging.get("page", 1))
                every = state.comments.get(int(listing[1]), [])
                shown = every[(page - 1) * size : page * size]
                return self._answer(200, [_shape(c, gitlab) for c in shown])
            if listing and self.command == "POST":
                comment = state.post_as(caller, int(listing[1]), body["body"])
                return self._answer(201, _shape(comment, gitlab))
            one = _GITHUB_ONE.search(path) or _GITLAB_ONE.search(path)
            if one and self.command in ("PATCH", "PUT", "DELETE"):
                return self._change(int(one[one.lastindex or 1]), body, gitlab)
            return self._answer(404, {"message": "Not Found"})

        def _change(self, wanted: int, body: Any, gitlab: bool) -> None:
            for comments in state.comments.values():
                for comment in comments:
                    if comment["id"] != wanted:
                        continue
                    if self.command == "DELETE":
                        comments.remove(comment)
                        return self._answer(204)
                    comment["body"] = body["body"]
                    return self._answer(200, _shape(comment, gitlab))
            return self._answer(404, {"message": "Not Found"})

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _handle

    with serving(Handler) as url:
        state.url = url
        yield state


@contextmanager
def serving(handler: Callable[..., BaseHTTPRequestHandler]) -> Iterator[str]:
    """``handler`` served on a free loopback port until the block ends; yields its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
