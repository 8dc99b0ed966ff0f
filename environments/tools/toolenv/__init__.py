"""Tool environments: a stateful domain (a JSON database plus tools and a policy) served to the
agent from inside the task container.

This package is stdlib-only on purpose: it is copied verbatim into every tool task's
``environment/`` (as ``/opt/toolenv/toolenv``) and runs there, and the generator imports the
very same code on the host to sample tool chains and compute each task's expected final state.

* :mod:`.core` - tools as JSON-schema functions, the environment (state, call log, policy).
* :mod:`.server` - the HTTP server: OpenAI-style ``/tools`` + ``/call`` and an MCP endpoint.
* :mod:`.cli` - ``tool`` inside the container: list and call tools from a shell.
* :mod:`.domains` - one module per domain (airline, banking, ...).
"""
