"""Keep signatures and credentials out of every text that came from the site.

Why: a site (or a proxy before it) may echo the request in its answer -- in an error message,
an HTML page, even a field of an answer. On this API a POST's signature covers only the
method's URL, so an echoed signature authorises any write of that method at any time; printed
in a CI log or journalled in a state directory it is as good as the secret. So every text
from the site is scrubbed before it becomes an error, a log event or a typed answer the engine
prints, journals or writes to a plan:

* any ``signature``/``api_key``/``api_secret``/``secret``/``password`` parameter's value
  (``name=value``, ``name%3Dvalue``, ``"name": "value"``);
* any run of 64 or more hex digits (the shape of a signature, whichever request it signed);
* the client's own API key (shown masked), API secret and HMAC key, raw or percent-encoded.

``scrub_patterns`` applies the first two to any text (the logging setup uses it as a last
line of defence); a ``Scrubber`` made from a client's credentials applies all three.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from reconciler.api.config import MASK, Secret, mask_key
from reconciler.api.signing import signing_key

_NAMES = r"signature|api_secret|api_key|secret|password"
_PARAMETER = re.compile(
    rf"({_NAMES})(\s*[\"']?\s*(?:=|%3D|:)\s*[\"']?)((?:[^&\s'\"<>,;%)\]}}]|%(?!26))+)",
    re.IGNORECASE,
)
_HEX_RUN_LENGTH = 64
_HEX_RUN = re.compile(rf"[0-9a-fA-F]{{{_HEX_RUN_LENGTH},}}")
_HEX_DIGITS = b"0123456789abcdefABCDEF"
_HEX_MARKS = bytes(0x31 if byte in _HEX_DIGITS else 0x30 for byte in range(256))
"""Every byte as ``1`` (a hex digit) or ``0`` (anything else), for ``has_hex_run``."""
_SHORTEST_KNOWN_VALUE = 6
"""Known values shorter than this are not searched for: masking every "ab" would garble text,
and no real key or secret is that short."""


def scrub_patterns(text: str) -> str:
    """``text`` without parameter values named like credentials and without signature-shaped
    hex runs."""
    text = _PARAMETER.sub(lambda m: m.group(1) + m.group(2) + MASK, text)
    return _HEX_RUN.sub(MASK, text)


class Scrubber:
    """Scrubs texts and answer documents for one client, whose credentials it knows.

    Most answers hold nothing to scrub, so a document is first searched as a whole -- its
    strings joined and lowercased, for the parameter names and the known values; the few
    strings long enough, for a hex run -- and walked string by string only on a hit.
    """

    def __init__(self, api_key: str, api_secret: Secret) -> None:
        secret = api_secret.reveal()
        replacements = {
            secret: MASK,
            signing_key(secret).decode("ascii"): MASK,
            api_key: mask_key(api_key),
        }
        self._known: dict[str, str] = {}
        for value, shown in replacements.items():
            if len(value) >= _SHORTEST_KNOWN_VALUE:
                self._known[value] = shown
                self._known[quote(value, safe="")] = shown
        known = "|".join(re.escape(value) for value in sorted(self._known, key=len, reverse=True))
        self._known_pattern = re.compile(known) if known else None
        words = {*_NAMES.split("|"), *(value.lower() for value in self._known)}
        # a word holding another ("api_secret", "secret") is found whenever that one is
        self._words = tuple(w for w in words if not any(o != w and o in w for o in words))
        ascii_words = all(word.isascii() for word in self._words)
        self._byte_words = tuple(w.encode("ascii") for w in self._words) if ascii_words else None

    def text(self, text: str) -> str:
        """``text`` with credentials and signatures masked."""
        if not self._suspect([text]):
            return text
        if self._known_pattern is not None:
            text = self._known_pattern.sub(lambda m: self._known[m.group(0)], text)
        return scrub_patterns(text)

    def document(self, value: Any, body: bytes | None = None) -> Any:
        """A parsed answer with every string in it (keys included) scrubbed.

        ``body``, the bytes ``value`` was parsed from, lets the common clean JSON answer pass
        on one search of its bytes instead of a walk of its strings (a large plan reads 1,100
        answers; the walk was a tenth of the client's CPU).
        """
        if body is not None and self._plainly_clean_json(body):
            return value
        strings: list[str] = []
        _collect(value, strings)
        return self._walk(value) if self._suspect(strings) else value

    def _plainly_clean_json(self, body: bytes) -> bool:
        """True when ``body`` is ASCII JSON whose bytes show no word to scrub and no hex run.

        Only where the bytes are the text, letter for letter: not XML (character references,
        declared encodings), not UTF-16/32 (NUL bytes), no non-ASCII byte (a Kelvin sign
        lowercases to "k"), no ``\\u`` escape (it could spell a letter or a hex digit the
        bytes do not show). Anything else takes the walk.
        """
        if self._byte_words is None or not body.lstrip().startswith(b"{"):
            return False
        lowered = body.lower()
        if not body.isascii() or b"\x00" in body or b"\\u" in lowered:
            return False
        if any(word in lowered for word in self._byte_words):
            return False
        return not has_hex_run(body)

    def _suspect(self, texts: list[str]) -> bool:
        joined = "\n".join(texts).lower()
        if any(word in joined for word in self._words):
            return True
        return any(len(text) >= _HEX_RUN_LENGTH and _HEX_RUN.search(text) for text in texts)

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {self.text(str(key)): self._walk(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self._walk(item) for item in value]
        return value


def has_hex_run(data: bytes) -> bool:
    """Whether ``data`` holds a run of ``_HEX_RUN_LENGTH`` or more hex digits.

    The bytes are mapped to ``1``/``0`` (hex digit or not) and searched for the run as a
    substring: a regular expression's search restarts at each of the many hex letters of an
    ordinary answer and took a third of the client's CPU per answer (10 us a kilobyte)."""
    return data.translate(_HEX_MARKS).find(b"1" * _HEX_RUN_LENGTH) >= 0


def _collect(value: Any, strings: list[str]) -> None:
    """Every string of a parsed answer, keys included, appended to ``strings``."""
    if isinstance(value, str):
        strings.append(value)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            strings.append(str(key))
            _collect(item, strings)
    elif isinstance(value, list):
        for item in value:
            _collect(item, strings)
