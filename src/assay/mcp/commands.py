"""The `assay mcp` command. Imports only click: the SDK loads when the server starts."""

from __future__ import annotations

import click

#: What to install when the SDK is missing (it is an optional extra).
INSTALL_HINT = "pip install 'assay[mcp]'"


@click.command("mcp")
def mcp_command() -> None:
    """Serve verify, plan and probe as MCP tools over stdio (for agents' MCP clients)."""
    try:
        from assay.mcp.server import serve
    except ImportError as exc:
        raise click.ClickException(
            f"the MCP server needs the mcp package ({exc.name or exc}): {INSTALL_HINT}"
        ) from None
    serve()


def register(cli: click.Group) -> None:
    cli.add_command(mcp_command)
