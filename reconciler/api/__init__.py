"""The site API: typed answers, errors, and the client that speaks it.

Modules, in the order a call passes through them:

* ``config``    -- ``ClientConfig`` and ``load_client_config``: site URL, credentials, limits
* ``methods``   -- the method table: one row per API method (verb, success keys, decoder)
* ``signing``   -- pure HMAC signing of GET URLs and POST bodies
* ``ratelimit`` -- the token bucket behind ``--rate-limit``
* ``client``    -- ``SiteClient``: one typed method per API method, saying what it sends
* ``caller``    -- the one path every call takes (slot, rate limit, deadline, retries, log)
* ``body``      -- reading an answer within the size cap, decompressing in bounded pieces
* ``boundary``  -- what came back (an answer or an exception) to a typed answer or one ``SiteError``
* ``scrub``     -- signatures and credentials out of every text the site sent
* ``xmlcodec``  -- answer bodies to Python structures (XML turned into the JSON shape)
* ``decode``    -- pure decoders from a success payload to ``answers``
* ``retry``     -- the one retry policy: wait how long, or give up
* ``errors``    -- the error tree

Nothing is re-exported here. The site's own rules (flags, name limits, paths) live outside
this package, in ``reconciler.spec``, shared by the manifest, the engine and the sandbox.
"""
