"""Benchmarks of the reconciler against the real sandbox server over loopback (see README)."""
