"""The `assay mcp` command. Imports only click: the SDK loads when the server starts
(`assay.mcp.front`, which answers `initialize` meanwhile)."""

from __future__ import annotations

import click

#: What to install when the SDK is missing (it is an optional extra).
INSTALL_HINT = "pip install 'assay[mcp]'"


@click.command("mcp")
def mcp_command() -> None:
    """Serve verify, plan and probe as MCP tools over stdio (for agents' MCP clients)."""
    from assay.mcp.front import main

    # The console entry goes to the front without click; this is the same server.
    if code := main():
        raise click.exceptions.Exit(code)


def register(cli: click.Group) -> None:
    cli.add_command(mcp_command)
