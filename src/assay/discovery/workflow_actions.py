"""GitHub Actions that run a check: the command line each stands for.

A workflow step may run a check through an action instead of a `run:` line
(`uses: actions-rs/cargo@v1` with `command: clippy`). Each action here is read as the
command its documentation says it runs, built from the step's `with:` inputs, and then
goes through the same recognition as a written line. Nothing is fetched or run: an
action not in this table says nothing about the project's checks.

golangci-lint is not a tool assay runs. Its action, or a `golangci-lint run` line, still
says that the project's Go code is linted, and `go vet`, one of golangci-lint's default
linters, stands in for it unless the project's golangci-lint configuration turns govet off.
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from assay.discovery.model import ProjectEnv

__all__ = [
    "GOLANGCI_CONFIGS",
    "GO_VET_STANDS_IN",
    "ActionRun",
    "action_run",
    "golangci_stand_in",
    "govet_turned_off",
]

#: Where golangci-lint looks for its configuration, at the root.
GOLANGCI_CONFIGS = (".golangci.yml", ".golangci.yaml")


@dataclass(frozen=True, slots=True)
class ActionRun:
    """The command line an action step stands for, and how to say where it came from."""

    script: str
    how: str
    """How the reason names it: the action (`psf/black`), and what stands in for what it
    runs where assay does not run that (golangci-lint's)."""
    cwd: str | None = None
    """The action's own `working-directory` input, where it has one."""


def _text(inputs: Mapping[Any, Any], name: str, default: str = "") -> str:
    value = inputs.get(name, default)
    return value if isinstance(value, str) else default


def _cargo(inputs: Mapping[Any, Any]) -> str | None:
    """actions-rs/cargo: `cargo <command> <args>`; `use-cross` runs cross, not cargo."""
    command = _text(inputs, "command")
    if not command or inputs.get("use-cross") in (True, "true"):
        return None
    return f"cargo {command} {_text(inputs, 'args')}"


def _clippy(inputs: Mapping[Any, Any]) -> str:
    """actions-rs/clippy-check: `cargo clippy <args>`."""
    return f"cargo clippy {_text(inputs, 'args')}"


def _ruff(inputs: Mapping[Any, Any]) -> str:
    """astral-sh/ruff-action (and chartboost's before it): `ruff <args> <src>`, by default
    `ruff check .`."""
    return f"ruff {_text(inputs, 'args', 'check')} {_text(inputs, 'src', '.')}"


def _black(inputs: Mapping[Any, Any]) -> str:
    """psf/black: `black <options> <src>`, by default `black --check --diff .`."""
    return f"black {_text(inputs, 'options', '--check --diff')} {_text(inputs, 'src', '.')}"


def _golangci(inputs: Mapping[Any, Any]) -> str:
    """golangci/golangci-lint-action: `go vet` stands in for the golangci-lint run."""
    try:
        words = shlex.split(_text(inputs, "args"))
    except ValueError:
        words = []
    return _go_vet(words)


def _go_vet(golangci_args: list[str]) -> str:
    """`go vet ./...` over the build tags a golangci-lint run is given."""
    tags = next(
        (w.split("=", 1)[1] for w in golangci_args if w.startswith("--build-tags=")),
        None,
    )
    return f"go vet -tags {shlex.quote(tags)} ./..." if tags else "go vet ./..."


def golangci_stand_in(words: list[str], env: ProjectEnv) -> str | None:
    """`go vet` for a `golangci-lint run` command (`$GITHUB_WORKSPACE/golangci-lint run`),
    where the project's golangci-lint runs govet; None for any other command."""
    if len(words) < 2 or posixpath.basename(words[0]) != "golangci-lint" or words[1] != "run":
        return None
    return _go_vet(words[2:]) if env.golangci_runs_govet else None


_GOLANGCI = "golangci/golangci-lint-action"

#: action (owner/name, without the `@ref`) -> its command line from the step's `with:`.
_ACTIONS: Mapping[str, Callable[[Mapping[Any, Any]], str | None]] = {
    "actions-rs/cargo": _cargo,
    "actions-rs/clippy-check": _clippy,
    "astral-sh/ruff-action": _ruff,
    "chartboost/ruff-action": _ruff,
    "psf/black": _black,
    _GOLANGCI: _golangci,
}

#: Why a `go vet` check comes from a golangci-lint run.
GO_VET_STANDS_IN = "go vet, one of its default linters, stands in"

_STANDS_IN = {_GOLANGCI: f"golangci-lint through {{action}}; {GO_VET_STANDS_IN}"}


def action_run(step: Mapping[Any, Any], env: ProjectEnv) -> ActionRun | None:
    """The command line a workflow step's action stands for; None for any other step, and
    for golangci-lint when the project's configuration turns govet off."""
    uses = step.get("uses")
    if not isinstance(uses, str):
        return None
    action = uses.split("@", 1)[0].strip().lower()
    build = _ACTIONS.get(action)
    if build is None or (action == _GOLANGCI and not env.golangci_runs_govet):
        return None
    inputs = step.get("with")
    inputs = inputs if isinstance(inputs, Mapping) else {}
    script = build(inputs)
    if script is None:
        return None
    how = _STANDS_IN.get(action, "{action}").format(action=action)
    cwd = inputs.get("working-directory")
    return ActionRun(script.strip(), how, cwd if isinstance(cwd, str) else None)


def govet_turned_off(config: Any) -> bool:
    """Whether a parsed golangci-lint configuration leaves govet out: disabled by name, or
    all linters off (`disable-all`, v2's `default: none`) without enabling it again."""
    linters = config.get("linters") if isinstance(config, Mapping) else None
    if not isinstance(linters, Mapping):
        return False

    def names(key: str) -> set[str]:
        value = linters.get(key)
        return {v for v in value if isinstance(v, str)} if isinstance(value, list) else set()

    if "govet" in names("disable"):
        return True
    all_off = linters.get("disable-all") is True or linters.get("default") == "none"
    return all_off and "govet" not in names("enable")
