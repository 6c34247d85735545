"""Where the tool's records live: the backend seam (``backend``) and its implementations.

``open_records(location, site)`` (in ``locate``) is the one entry point the CLI uses; the
engine receives the ``RecordStore`` it returns and never touches paths or connections.
"""
