"""The `assay mcp` command. Imports only click: the SDK loads when the server starts
(`assay.mcp.front`, which answers `initialize` meanwhile)."""

from __future__ import annotations

import click

#: What to install when the SDK is missing (it is an optional extra).
INSTALL_HINT = "pip install 'assay[mcp]'"


@click.command("mcp")
@click.option(
    "--allow-sandbox",
    type=click.Choice(["local", "none"]),
    default=None,
    help="Let clients ask verify for this weaker sandbox (default: refused; the "
    "repository's code is not to run unconfined on a client's say).",
)
def mcp_command(allow_sandbox: str | None) -> None:
    """Serve verify, plan and probe as MCP tools over stdio (for agents' MCP clients)."""
    from assay.mcp.front import main

    # The console entry goes to the front without click; this is the same server.
    if code := main(allow_sandbox or "auto"):
        raise click.exceptions.Exit(code)


def register(cli: click.Group) -> None:
    cli.add_command(mcp_command)
