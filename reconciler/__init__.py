"""site-reconciler: manage the workspaces and user groups of a file-sharing site as code."""

__version__ = "0.1.0"
