"""The site's rules for names, usernames and e-mail addresses, as small pure functions.

A name the site would store differently from how it was written never converges: the site
strips ``"Finance "`` to ``"Finance"``, so every apply asks for ``"Finance "`` again, and a
zero-width or bidi control makes two names look alike to people but not to the API. Each
function returns why a text cannot be used, as a clause that reads after its subject
(``f"the workspace name {name!r} {problem}"``, ``f"its name {problem}"``), or None when the
text is fine. The manifest's rules and the engine's export both call these, so each rule is
written once.
"""

from __future__ import annotations

import re
import unicodedata

from reconciler.spec import MAX_WORKSPACE_NAME_LENGTH, NAME_LIST_SEPARATOR

INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})
"""Control and format characters (NUL, tab, newline, zero-width, bidi controls) and the line
and paragraph separators: invisible or line-breaking, never part of a name someone typed."""

USERNAME_CHARACTERS = re.compile(r"[A-Za-z0-9_.@-]+")
"""``user_add``: usernames hold letters, digits, ``-``, ``_``, ``.`` and ``@`` only. Read as
ASCII letters: the documentation names no others, and a refused ``user_add`` fails an apply."""

_EMAIL_SHAPE = re.compile(r"[^@\s]+@[^@\s]+")


def describe_character(char: str) -> str:
    """``U+200B (ZERO WIDTH SPACE)``; control characters have no Unicode name."""
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" ({name})" if name else "")


def text_problem(text: str) -> str | None:
    """Why ``text`` would not reach the site as written: blank, padded or invisible parts."""
    if not text.strip():
        return "is empty" if not text else "has no visible character"
    if text != text.strip():
        end = "starts" if text[0].isspace() else "ends"
        return f"{end} with whitespace, which the site strips, so it would never match"
    if text.isprintable():  # the fast, common answer: nothing invisible
        return None
    for char in text:
        if unicodedata.category(char) in INVISIBLE_CATEGORIES:
            return (
                f"contains the invisible or control character {describe_character(char)}, "
                "which makes names that look alike differ"
            )
    return None


def workspace_name_problem(name: str) -> str | None:
    """Why ``workspace_add`` could not create ``name`` exactly as written, or None."""
    problem = text_problem(name)
    if problem is not None:
        return problem
    if len(name) > MAX_WORKSPACE_NAME_LENGTH:
        return f"is {len(name)} characters long; at most {MAX_WORKSPACE_NAME_LENGTH} are allowed"
    if NAME_LIST_SEPARATOR in name:
        return "contains a comma, which the API reads as a separator between names"
    return None


def group_name_problem(name: str) -> str | None:
    """Group names follow the workspace rules: the same 40 characters, the same comma split."""
    return workspace_name_problem(name)


def username_problem(username: str) -> str | None:
    """Why ``user_add`` would refuse ``username`` or store it differently, or None."""
    problem = text_problem(username)
    if problem is not None:
        return problem
    odd = sorted(set(USERNAME_CHARACTERS.sub("", username)))
    if odd:
        shown = ", ".join(repr(char) for char in odd)
        return f"contains {shown}; a username holds only letters, digits, `-`, `_`, `.` and `@`"
    return None


def name_problem(kind: str, name: str) -> str | None:
    """Why a manifest could not hold ``name`` as the name of a ``kind`` (``workspace``,
    ``group``, ``user``), or None: the rule ``validate`` holds each declaration to."""
    rules = {
        "workspace": workspace_name_problem,
        "group": group_name_problem,
        "user": username_problem,
    }
    return rules[kind](name)


def email_problem(email: str) -> str | None:
    """Why ``email`` cannot be a user's e-mail address, or None (the site checks the rest)."""
    problem = text_problem(email)
    if problem is not None:
        return problem
    if not _EMAIL_SHAPE.fullmatch(email):
        return "is not an e-mail address: it needs one @ with text on both sides and no spaces"
    return None


CONFUSABLE_SCRIPTS = ("LATIN", "GREEK", "CYRILLIC")
"""Scripts whose letters pass for one another (Cyrillic U+0430 and U+043E, Greek U+03BF look
like Latin ``a`` and ``o``): one word
mixing them is a spoof or a slip of the keyboard layout, never a name someone meant."""

_WORD = re.compile(r"[^\W\d_]+")


def mixed_script_problem(text: str, *, whole: bool = False) -> str | None:
    """Why ``text`` has a word mixing Latin, Greek or Cyrillic letters (``admin`` whose ``a``
    is Cyrillic U+0430), which NFKC does not fold: it looks like one word, matches another.
    ``whole`` judges the text as one word: a username is one (``svc-`` then a Cyrillic letter
    is never meant)."""
    if text.isascii():
        return None
    for word in [text] if whole else _WORD.findall(text):
        scripts: dict[str, str] = {}
        for char in word:
            script = unicodedata.name(char, "").partition(" ")[0]
            if script in CONFUSABLE_SCRIPTS and char.isalpha():
                scripts.setdefault(script, char)
        if len(scripts) > 1:
            odd = next(char for script, char in scripts.items() if script != "LATIN")
            mixed = " and ".join(sorted(script.title() for script in scripts))
            return (
                f"mixes {mixed} letters in {word!r}: {describe_character(odd)} looks like "
                "another letter but never matches it"
            )
    return None


def pattern_problem(pattern: str, *, usernames: bool = False) -> str | None:
    """Why a ``protect``/``protect_users`` glob would silently fail to protect what it seems
    to: the same whitespace and invisible-character rules as names, and no letters of another
    script that only look alike (for ``usernames``, anywhere in the pattern). Compatibility
    forms (fullwidth letters, ligatures) are fine: patterns match folded names
    (``reconciler.identity``), where they are their plain letters."""
    return text_problem(pattern) or mixed_script_problem(pattern, whole=usernames)


def reference_problem(text: str) -> str | None:
    """Why a user reference (username, e-mail or ID) could never name a user as written."""
    return text_problem(text)
