"""The plan's way in: select what a plan covers (targets, selection, scope), resolve the names a
read looks for (wanted), read the site (site_read, live), settle identities (identities);
observe runs them in that order.
"""
