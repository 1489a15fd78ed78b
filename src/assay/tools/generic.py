"""Task runners and the commands a repository names: make, just, and `shell` (anything else).

Their output is the project's commands' output, read generically; make itself is
identified, a command the repository names is identified by the digest of its file.
"""

from __future__ import annotations

import os
from dataclasses import replace

from assay.gopath_layout import IMPORT_PATH_ENV, gopath_wrapper
from assay.tools.index import SHELL
from assay.tools.instrumented import Instrumented, Request
from assay.tools.spec import (
    SCRIPT_KINDS,
    Command,
    Ecosystem,
    EcosystemSpec,
    Launcher,
    Match,
    ToolSpec,
)


def _target(rest: list[str]) -> Match | None:
    """`make -j4 test`: a target whose name says which question it answers."""
    targets = [w for w in rest if not w.startswith("-") and "=" not in w]
    if targets and targets[0] in SCRIPT_KINDS:
        return Match(SCRIPT_KINDS[targets[0]], tuple(rest))
    return None


def _make(request: Request) -> Instrumented:
    """`make TARGET` as it is; in a Go tree from before modules (`in_gopath_mode`), from
    its import path in a GOPATH of its own, as a go check there runs, since the recipe's
    go commands name the tree's packages by that path (`go test github.com/pkg/errors`)."""
    planned = request.runs(request.argv)
    if (caller := os.environ.get("GOFLAGS", "").strip()) and "GOFLAGS" in planned.env:
        # The caller's flags stand, with the target's after them.
        planned = replace(
            planned, env={**planned.env, "GOFLAGS": f"{caller} {planned.env['GOFLAGS']}"}
        )
    if IMPORT_PATH_ENV not in planned.env:
        return planned
    return replace(planned, wrapper=("sh", "-c", gopath_wrapper('exec "$0" "$@"')))


MAKE = ToolSpec(
    name="make",
    ecosystem=Ecosystem.GENERIC,
    binaries=("make", "gmake"),
    install_hint="install make (Debian: `apt-get install make`)",
    commands=(Command(("make", "gmake"), match=_target),),
    instrument=_make,
    wrapper=True,
    # The recipes are the commands: a change to one is a change to what the check runs.
    config_files=("**/Makefile", "**/makefile", "**/GNUmakefile", "**/*.mk"),
)
# No binaries: whatever the repository names is run as written and never asked its version.
SHELL_COMMAND = ToolSpec(name=SHELL, ecosystem=Ecosystem.GENERIC, wrapper=True)

ECOSYSTEM = EcosystemSpec(
    ecosystem=Ecosystem.GENERIC,
    tools=(MAKE, SHELL_COMMAND),
    # just has no declaration of its own (it is read generically): its recipes are here.
    test_files=("**/justfile", "**/Justfile", "**/.justfile", "**/*.just"),
    generic_commands=(Command(("just",), match=_target),),
    steering_env=("ASDF", "MISE", "RTX", "LD_LIBRARY_PATH", "LD_PRELOAD"),
    home_dirs=(".rbenv", ".sdkman/candidates", ".elan", ".ghcup/bin", ".ghcup/ghc", ".deno/bin"),
    launchers={"time": Launcher(), "exec": Launcher(), "command": Launcher()},
)
