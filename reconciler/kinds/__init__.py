"""One module per kind of object the tool manages: its spec, and what reads and compares it.

``change`` holds what every kind shares (a fact known or not, a field that differs, a spec's
fields); ``workspace``, ``group`` and ``user`` each hold their kind's spec type, its name
identity and the kind-specific parts of comparison, adoption, export and rename detection.
These modules import nothing of the engine, the API or the manifest loader: those import
them.
"""
