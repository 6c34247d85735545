"""Who besides the records' writers can read the PostgreSQL plan keys: a key is kept only
where none can.

Whoever reads a site's plan key can seal plans that ``apply`` accepts. A key is therefore
stored only after checking, in the transaction that stores it, that no role but the writers
can read ``plan_keys`` (issue 42: a refused ``plan -o`` stored the key first and complained
after, so the review role read it, and a REVOKE afterwards no longer helped). A key found
readable by such a role is discarded where this role may delete it: any of them may have
copied it already, so it never seals or checks a plan again.
"""

from __future__ import annotations

from dataclasses import dataclass

from reconciler.errors import RefusedForSafety
from reconciler.state.postgres_db import Connection, Database

_KEY_READERS = """
    SELECT r.rolname FROM pg_roles r
    WHERE NOT r.rolsuper
      AND (r.rolcanlogin OR EXISTS (SELECT 1 FROM pg_auth_members m WHERE m.roleid = r.oid))
      AND has_column_privilege(r.oid, '{s}.plan_keys', 'key', 'SELECT')
      AND NOT has_table_privilege(r.oid, '{s}.versions', 'INSERT')
    ORDER BY r.rolname
"""
"""Roles that can read the key (by a grant on the table or on its column, to them, a role
they belong to or PUBLIC, or by reading every table) but not write the records: a reporting
role, a backup user, docs/ci.md's reviewer. Superusers read everything anyway."""

_GRANTS = """
    SELECT DISTINCT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(r.rolname) END
    FROM pg_class c
    LEFT JOIN pg_attribute k ON k.attrelid = c.oid AND k.attname = 'key'
    CROSS JOIN LATERAL aclexplode(coalesce(c.relacl, '{{}}') || coalesce(k.attacl, '{{}}')) a
    LEFT JOIN pg_roles r ON r.oid = a.grantee
    WHERE c.oid = '{s}.plan_keys'::regclass AND a.privilege_type = 'SELECT'
      AND a.grantee <> c.relowner
      AND (a.grantee = 0 OR NOT has_table_privilege(a.grantee, '{s}.versions', 'INSERT'))
    ORDER BY 1
"""
"""The grants that let them read it: what a REVOKE must name (revoking a table privilege
revokes the column's too). A REVOKE from a reader who holds it through a group or PUBLIC
would change nothing."""


_TABLE_AND_DELETE = (
    "SELECT quote_ident(%s) || '.plan_keys', has_table_privilege('{s}.plan_keys', 'DELETE')"
)
"""The table's name as a statement writes it, and whether this role may delete a key."""


@dataclass(frozen=True, slots=True)
class KeyExposure:
    """Roles that can read the plan keys without writing the records, and what to do."""

    readers: tuple[str, ...]
    revoke: str | None  # the statement that takes their access away; None: no grant does it
    discarded: bool  # this site's stored key was deleted, being no secret any more

    def refusal(self, where: str) -> RefusedForSafety:
        names = ", ".join(self.readers)
        gone = (
            " The key kept there was discarded (they may have copied it): plans sealed with "
            "it are refused."
            if self.discarded
            else ""
        )
        access = (
            f"take their access away: {self.revoke}."
            if self.revoke
            else "take away what lets them read every table (such as membership of "
            "pg_read_all_data)."
        )
        return RefusedForSafety(
            f"No plan key can be kept in {where}: the database role(s) {names} can read it "
            "without writing the records, so any of them could seal a plan that apply would "
            f"accept.{gone}",
            hint="Give the commands that seal and check plans a secret RECONCILER_PLAN_KEY "
            f"(at least 32 characters; the records' key is then not used), or {access}",
        )


def key_exposure(db: Database, conn: Connection, site: str) -> KeyExposure | None:
    """Who could read ``site``'s plan key besides the writers (None: no one); when anyone
    can, the key is deleted in ``conn``'s transaction where this role may. Call it in the
    transaction that reads or stores the key, before it does."""
    readers = tuple(str(name) for (name,) in conn.execute(db.q(_KEY_READERS)).fetchall())
    if not readers:
        return None
    grantees = [str(name) for (name,) in conn.execute(db.q(_GRANTS)).fetchall()]
    table, deletable = conn.execute(db.q(_TABLE_AND_DELETE), [db.schema]).fetchone() or ("", False)
    revoke = f"REVOKE SELECT ON {table} FROM {', '.join(grantees)}" if grantees else None
    discarded = False
    if deletable:
        deleted = conn.execute(db.q("DELETE FROM {s}.plan_keys WHERE site = %s"), [site])
        discarded = deleted.rowcount > 0
    return KeyExposure(readers, revoke, discarded)
