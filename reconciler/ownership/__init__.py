"""Who owns which part of a manifest, declared in the manifest and enforced by the tool.

A site that grows splits its manifest: a central team keeps the site's settings, and each
team edits the file of its own workspaces and groups. ``ownership:`` (in a central file)
says which files belong to which owners, which names each may declare and what each may set;
everything not granted stays with the central owners. The tool checks it where it already
looks: ``validate`` refuses a team file that oversteps (``manifest/ownership.py``), a plan
refuses a creation only the central owners may make and names, per change, whose approval it
needs (``owners.py``), ``reconciler codeowners`` writes the forge's CODEOWNERS from the same
declarations and ``validate`` says when it drifted (``codeowners.py``).

* ``model``: the declarations as data (in the desired site, so a saved plan carries them)
  and the matching of files and names;
* ``owners``: the owners of a workspace, of a change, and the creations a plan may not make;
* ``codeowners``: the CODEOWNERS block of both forges, and where a repository keeps its own.
"""
