"""The sandbox: a real HTTP emulator of the site API that tests, benchmarks and pipelines use.

Strict wherever the reference or the public notes state a rule, switchable wherever they are
silent (``settings.SandboxSettings``). The modules, in the order a request meets them:

* ``server``    -- uvicorn on loopback; ``running_sandbox`` starts one as a child process
* ``transport`` -- ``SandboxTransport``: the app in-process for httpx, dropped connections included
* ``app``       -- ``create_app``: state, seed and settings behind one Starlette app
* ``dispatch``  -- the ``/api/<method>`` pipeline (latency, rate limit, faults, auth, method)
* ``auth``      -- signatures checked over the bytes received
* ``methods/``  -- one handler per API method, and the method table
* ``codec``     -- the JSON and XML forms of every answer and error
* ``store``     -- SQLite; ``rows`` its records; ``rules`` the workspace rules
* ``seed``      -- seed files; ``synthetic`` seeds of any size
* ``faults``    -- rate limiter and random faults; ``control`` the ``/_sandbox/`` surface

See ``README.md`` beside this file for every decision taken where the documentation is silent.
"""
