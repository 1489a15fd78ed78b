"""`assay mcp`: verify, plan and probe served as MCP tools over stdio.

- `commands`: the click command (imports only click; the SDK loads when it runs).
- `server`: the tools, on the official `mcp` SDK; each call runs in a worker process.
- `worker`: one call's worker: runs the library, streams progress and the result as
  JSON lines; stopping it (SIGTERM) kills every process tree it started.
- `requests`: the tools' arguments, checked before anything runs.
"""
