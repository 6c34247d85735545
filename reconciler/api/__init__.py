"""The site API: constants, records, errors, and the client that speaks it.

Modules, in the order a call passes through them:

* ``config``    -- ``ClientConfig`` and ``load_client_config``: site URL, credentials, limits
* ``methods``   -- each API method as data (verb, answer key, parameters, retry safety)
* ``signing``   -- pure HMAC signing of GET URLs and POST bodies
* ``ratelimit`` -- the token bucket behind ``--rate-limit``
* ``client``    -- ``SiteClient``: the one ``_call`` path every method takes
* ``xmlcodec``  -- answer bodies to Python structures (XML turned into the JSON shape)
* ``decode``    -- pure decoders to ``records`` and classification into ``errors``

Nothing is re-exported here, so importing ``reconciler.api.spec`` (as the manifest and the
sandbox do) does not pull in httpx.
"""
