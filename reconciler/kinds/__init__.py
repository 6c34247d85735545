"""One package per kind of object the tool manages: everything about that kind, in one home.

``change`` holds what every kind shares (a fact known or not, a field that differs, a spec's
fields). ``workspace``, ``group`` and ``user`` are packages: each ``__init__`` holds the kind's
spec type, its name identity and the kind-specific parts of comparison, adoption, export and
rename detection, and imports nothing of the engine, the API or the manifest loader (those
import it); each ``diff`` module is the kind's part of ``engine.diff.compare`` and each
``steps`` module what its differences become in a plan (``engine.planner`` calls them). Those
two are written against the engine's types, so nothing below the engine imports them.
"""
