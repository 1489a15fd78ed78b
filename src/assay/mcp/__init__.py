"""`assay mcp`: verify, plan and probe served as MCP tools over stdio.

- `front`: `assay mcp` as it starts: answers `initialize` at once and relays between the
  client and the SDK, which loads meanwhile (the console entry calls it without click).
- `early`: that answer, the SDK's own for this server (standard library only).
- `commands`: the click command (`--help`; imports only click).
- `server`: the tools, on the official `mcp` SDK; each call runs in a worker process.
- `worker`: one call's worker: runs the library, streams progress and the result as
  JSON lines; stopping it (SIGTERM) kills every process tree it started.
- `requests`: the tools' arguments, checked before anything runs.
"""
