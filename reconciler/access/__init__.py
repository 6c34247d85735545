"""Who can reach what: effective access per person and workspace, for reviews and plans.

``model.py`` holds the typed report and the plan's access changes (no I/O, no engine
imports, so ``engine/planning/plan.py`` can carry them); ``read.py`` reads the site as a
report needs; ``effective.py`` and ``findings.py`` turn a read into entries and findings;
``since.py`` compares with an earlier report; ``job.py`` is the ``reconciler access`` job end
to end. Whom a plan's writes give or take access each write says itself (``core/access.py``).
"""
