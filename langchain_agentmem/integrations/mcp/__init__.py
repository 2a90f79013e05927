"""The MCP server of ``agentmem mcp``: the memory tools over stdio (:mod:`.server`) or over
Streamable HTTP, a bearer token per user (:mod:`.http`, :mod:`.tokens`).

:mod:`.server` and :mod:`.http` need the ``mcp`` extra; this ``__init__`` imports neither.
"""
