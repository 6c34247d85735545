"""The policy a saved plan runs under: never weaker than any the pipeline vouches for.

A plan file carries the manifest it was made from, policy included. Were that policy trusted,
whoever could seal a plan could also switch off ``protect`` or raise ``max_deletes`` in it.
``apply plan.json`` therefore runs under the *strictest* combination of the plan's policy and
the one the pipeline vouches for: the manifest the apply job itself was given, else the
policy the records' last apply ran under. A protect pattern in either protects, a guard
takes its tightest value, deletion is allowed only if both allow it.
"""

from __future__ import annotations

from collections.abc import Iterable

from reconciler.model import Policy, ReviewPolicy


def strictest(policies: Iterable[Policy]) -> Policy:
    """One policy no looser than any of ``policies`` on any setting."""
    given = list(policies)
    return Policy(
        prune=all(p.prune for p in given),
        max_delete_fraction=min(p.max_delete_fraction for p in given),
        max_member_removal_fraction=min(p.max_member_removal_fraction for p in given),
        max_deletes=min(p.max_deletes for p in given),
        protect=_union(p.protect for p in given),
        prune_users=all(p.prune_users for p in given),
        protect_users=_union(p.protect_users for p in given),
        min_admins=max(p.min_admins for p in given),
        max_user_removal_fraction=min(p.max_user_removal_fraction for p in given),
        reviewers=_union(p.reviewers for p in given),
        review=ReviewPolicy(strict=any(p.review.strict for p in given)),
    )


def _union(patterns: Iterable[tuple[str, ...]]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for group in patterns:
        for pattern in group:
            seen.setdefault(pattern, None)
    return tuple(seen)
