"""Access reviews that close the loop: ``reconciler review start|check|apply|close``.

``model.py`` is the review file's rows and header and the digests that seal them;
``files.py`` writes and reads it (CSV, JSON); ``reviewers.py`` says who is to review an access
and whom a name means; ``population.py`` freezes a whole-site access report into a review;
``check.py`` finds every problem of a filled review; ``revoke.py`` turns its revocations into
manifest edits, which ``yaml_edit.py`` makes in place; ``close.py`` looks for each revocation
on the site and for the apply that removed it; ``evidence.py`` is what a closed review leaves;
``job.py`` the two commands that read the site, end to end.
"""
