"""One package per kind of object the tool manages: everything about that kind, in one home.

``change`` holds what every kind shares (a fact known or not, a field that changes, a spec's
fields, the one fold of names). ``workspace``, ``group`` and ``user`` are packages: each
``__init__`` holds the kind's spec, name rule and field rules and imports nothing of the
engine, the API, the manifest loader or the CLI; ``diff``, ``plan``, ``actions``, ``facts``,
``adopt`` (and a workspace's ``access``, ``renames``, ``stored``) are its comparison, its plan,
its writes and what they do to access, written against ``reconciler.core``; ``kind`` is the
one ``Kind`` the engine loops over, listed in ``registry`` (``KINDS``). No kind imports the
engine; no engine module imports a kind by name.
"""
