"""A directory swapped for a link and back in a tight loop, as a run in place that can
write beside another run's toolchain could swap it while that run's sandbox is built."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

SWAPPER = """
import os, signal, sys, time
tools, secret = sys.argv[1], sys.argv[2]
aside = tools + ".real"
stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
print("ready", flush=True)
while not stop:
    os.rename(tools, aside)
    os.symlink(secret, tools)
    time.sleep(0.0004)
    os.unlink(tools)
    os.rename(aside, tools)
    time.sleep(0.0004)
"""


def tools_and_secret(where: Path) -> tuple[Path, Path, Path]:
    """A toolchain directory (`tools/bin/tool`, `tools/marker`), a directory no sandbox may
    show (`secret/marker`), and the tool's path."""
    tools, secret = where / "tools", where / "secret"
    for made in (tools / "bin", secret / "bin"):
        made.mkdir(parents=True)
    tool = tools / "bin" / "tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    (tools / "marker").write_text("the tools\n")
    (secret / "marker").write_text("the secret\n")
    return tools, secret, tool


@contextlib.contextmanager
def swapping(tools: Path, secret: Path) -> Iterator[None]:
    """`tools` swapped for a link to `secret` and back until the block ends; `tools` is
    the directory again after it."""
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(tools), str(secret)], stdout=subprocess.PIPE
    )
    try:
        assert swapper.stdout is not None and swapper.stdout.readline() == b"ready\n"
        yield
        swapper.terminate()
        assert swapper.wait(timeout=10) == 0
    finally:
        if swapper.poll() is None:
            swapper.kill()
            swapper.wait()
        if swapper.stdout is not None:
            swapper.stdout.close()
    assert tools.is_dir() and not tools.is_symlink()
