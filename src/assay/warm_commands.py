"""`assay server start|stop|status`: the warm server (`assay.warm_server`) by hand.

Only click and the small client module are imported here at the top; the server's module
loads in its own process.
"""

from __future__ import annotations

import click

from assay.warm_client import DEFAULT_IDLE_TIMEOUT_S, ask, socket_path

#: How long `start` waits for a new server to answer before saying it did not start.
START_WAIT_S = 30.0


@click.group("server")
def server_group() -> None:
    """A warm process that answers run, verify, plan and probe without start-up."""


@server_group.command("start")
@click.option(
    "--idle-timeout",
    type=click.FloatRange(min=1.0),
    default=DEFAULT_IDLE_TIMEOUT_S,
    show_default=True,
    help="Seconds without a request after which the server exits.",
)
def start(idle_timeout: float) -> None:
    """Start a server for this assay, unless one runs."""
    import os
    import signal
    import time

    from assay.warm_client import start_in_background

    path = socket_path()
    running = _status(path)
    if running is not None:
        click.echo(f"assay server: already running (pid {running[1]}) at {path}")
        return
    pid = start_in_background(path, idle_timeout=idle_timeout)
    if pid is None:
        raise click.ClickException("the server could not be started; assay runs without it")
    deadline = time.monotonic() + START_WAIT_S
    while time.monotonic() < deadline:
        status = _status(path)
        if status is not None:
            click.echo(
                f"assay server: running (pid {status[1]}) at {path}; it exits after "
                f"{idle_timeout:g} s without a request, or on `assay server stop`"
            )
            return
        done, code = os.waitpid(pid, os.WNOHANG)
        if done:
            raise click.ClickException(
                f"the server exited at start-up (status {code}); assay runs without it"
            )
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    raise click.ClickException("the server did not answer in time; assay runs without it")


@server_group.command("stop")
def stop() -> None:
    """Stop this assay's server, if one runs (a run in progress goes on to its end)."""
    path = socket_path()
    answer = ask(path, "stop")
    if answer is None:
        click.echo("assay server: not running")
    else:
        click.echo(f"assay server: stopped (pid {answer[1]})")


@server_group.command("status")
def status() -> None:
    """Say whether this assay's server runs, and what it has served."""
    path = socket_path()
    answer = _status(path)
    if answer is None:
        click.echo("assay server: not running")
        raise SystemExit(1)
    _, pid, started, served, refused = answer
    import time

    up = time.time() - started if isinstance(started, float) else 0.0
    click.echo(
        f"assay server: running (pid {pid}) at {path}, up {up:.0f} s; "
        f"{served} served, {refused} refused (their clients ran the command themselves)"
    )


def _status(path: str) -> tuple[object, ...] | None:
    answer = ask(path, "status")
    return answer if answer is not None and answer[0] == "status" else None


def register(cli: click.Group) -> None:
    cli.add_command(server_group)
