"""The project's pre-commit hooks of known Python tools, where its CI runs them, as checks.

termcolor type-checks only through its mirrors-mypy hook (`--strict`), which its CI runs
with prek: nothing else names mypy, so a type error was VERIFIED. Each hook of mypy,
black, ruff (`ruff`, `ruff-check`, `ruff-format`), flake8 or isort whose repository is
the tool's own or its mirror becomes a check, run as `pre-commit run --all-files` runs
it: the hook's entry in check mode (`black --check`, `ruff format --check`, ruff without
`--fix`), its `args` (else the mirror's), and the files its `files`, `exclude` and
`types` choose, in one run.

Only at the release its `rev` pins: a hook's tool is installed afresh in CI at that
release, and another one checks otherwise (a new mypy or black style fails a tree the
maintainers' passes). `--install` installs it (`assay.install`); without, a hook whose
tool here is another release is left out, saying so. A hook that sets its own `entry`,
runs at a stage `--all-files` does not, or chooses files by an expression this module does
not evaluate safely is left out too; other repositories' hooks are not run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.discovery.command_lines import recognise
from assay.discovery.files import RepoFiles
from assay.discovery.hook_files import HookFiles, UnchosenFiles, UnsafeExpression
from assay.discovery.model import (
    Candidate,
    DetectorReport,
    Ecosystem,
    Origin,
    ProjectEnv,
    Source,
    report,
)
from assay.discovery.pre_commit_mypy import MIRROR_ARGS
from assay.discovery.text import line_of
from assay.discovery.tool_versions import tool_version
from assay.tools.python_version_files import generated_version_files
from assay.verdict import Kind

NAME = "pre-commit-hooks"

__all__ = ["HOOKS", "NAME", "detect", "hooked_packages"]


@dataclass(frozen=True, slots=True)
class Hook:
    """How a known repository's hook runs its tool, as its `.pre-commit-hooks.yaml` says."""

    executable: str
    words: tuple[str, ...]
    """The entry's words after the tool, made a check where the hook rewrites files."""
    kind: Kind
    types: frozenset[str]
    args: tuple[str, ...] = ()
    """The hook definition's own `args`, replaced by a configuration's."""
    fixing: frozenset[str] = frozenset()
    """Arguments that make the tool rewrite files: left out, the check reports instead."""
    name: str | None = None
    """The check's name, where the tool's would not tell it from the tool's other hook."""


_PYTHON = frozenset({"python", "pyi"})
#: (package, hook id) -> how it runs; packages as `PRE_COMMIT_PACKAGES` names them.
HOOKS: Mapping[tuple[str, str], Hook] = {
    ("mypy", "mypy"): Hook("mypy", (), Kind.TYPECHECK, _PYTHON, MIRROR_ARGS),
    ("black", "black"): Hook("black", ("--check", "--diff"), Kind.LINT, _PYTHON),
    **{
        ("ruff", hook_id): Hook(
            "ruff",
            ("check", "--force-exclude"),
            Kind.LINT,
            _PYTHON | {"jupyter"},
            fixing=frozenset({"--fix", "--unsafe-fixes", "--fix-only"}),
        )
        for hook_id in ("ruff", "ruff-check")
    },
    ("ruff", "ruff-format"): Hook(
        "ruff",
        ("format", "--force-exclude", "--check"),
        Kind.LINT,
        _PYTHON | {"jupyter"},
        name="ruff-format",
    ),
    ("flake8", "flake8"): Hook("flake8", (), Kind.LINT, frozenset({"python"})),
    ("isort", "isort"): Hook(
        "isort", ("--check-only", "--diff"), Kind.LINT, _PYTHON | {"cython"}, ("--filter-files",)
    ),
}
#: The stages `pre-commit run --all-files` runs a hook at (a hook with none runs at all).
_RUN_STAGES = frozenset({"pre-commit", "commit"})
#: Most files handed to one check: pre-commit splits longer lists into several runs.
MAX_FILES = 4000


def hooked_packages(root: Path) -> frozenset[str]:
    """The packages of the hooks this module would plan (CI runs them, and they pin a
    release): what `--install` installs at their pins before the plan is made again."""
    from assay.tools.python_requirements import pre_commit_pins

    pinned = pre_commit_pins(root)  # {} where CI does not run the hooks
    return frozenset(package for package, _, _, _ in _hooks(_config(root)) if package in pinned)


def detect(files: RepoFiles, env: ProjectEnv) -> DetectorReport:
    from assay.tools.python_requirements import (
        PRE_COMMIT_CONFIG,
        pre_commit_pins,
        pre_commit_runs_in_ci,
    )

    root = Path(files.root)
    config = _config(root)
    if not config or not pre_commit_runs_in_ci(root):
        return report(NAME)
    text = files.read_text(PRE_COMMIT_CONFIG) or ""
    pins = pre_commit_pins(root)
    # The hooks are the plan's tree's; what they check is the tree they run in, with the
    # tools installed there: under --protect a module the change adds is handed to them too.
    ran_in = Path(env.tree) if env.tree is not None else root
    handed = RepoFiles(str(ran_in)) if env.tree is not None else files
    listing = HookFiles(handed, env.venv_dirs, config, generated_version_files(root))
    found: list[Candidate] = []
    notes: list[str] = []
    unplanned: list[str] = []
    for package, hook_id, entry, hook in _hooks(config):
        source = Source(PRE_COMMIT_CONFIG, line_of(text, rf"id:\s*['\"]?{re.escape(hook_id)}\b"))
        what = f"pre-commit hook {hook_id} ({package})"
        why = _left_out(entry)
        pin = pins.get(package)
        have = tool_version(env, ran_in, package, hook.executable) if pin else None
        if why is None and pin is None:
            why = "its `rev` names no release of the tool"
        if why is None and have != pin:
            why = (
                f"it pins {package} {pin} and the {package} here is "
                f"{have or 'not found, or of no version that can be read'}: run at another "
                "release it would check otherwise than the project's CI (--install installs it)"
            )
        try:
            chosen = listing.files(entry, hook.types) if why is None else ()
        except UnchosenFiles as refused:
            if env.tree is not None:
                # The change's tree decided it: a change that added 20,000 folders would
                # otherwise drop the base's hooks, and its type error with them.
                unplanned.append(f"{what} could not be run on the change: {refused}")
                continue
            why, chosen = str(refused), ()
        except UnsafeExpression as refused:
            why = str(refused)
            chosen = ()
        # Not where the change's tree is listed: a change could add files to drop the hook.
        # All of them are handed, as CI hands them; a list too long to start is no pass.
        if why is None and len(chosen) > MAX_FILES and env.tree is None:
            why = f"it is handed {len(chosen)} files, more than {MAX_FILES}"
        if why is not None:
            notes.append(f"{what} not run: {why}")
            continue
        if not chosen and entry.get("pass_filenames", True) is not False:
            continue  # pre-commit skips a hook no file is handed to
        found.append(_candidate(package, hook_id, entry, hook, chosen, env, source, pin or ""))
    if others := _other_hooks(config):
        notes.append(
            f"pre-commit hooks not run: {', '.join(others)} (a local or system hook, or one "
            "of a repository whose tool assay does not run)"
        )
    return report(NAME, found, notes=notes, unplanned=unplanned)


#: Most other hooks named in the note.
_MAX_NAMED = 20


def _other_hooks(config: Mapping[Any, Any]) -> list[str]:
    """The ids of the configuration's hooks that are not `HOOKS`'."""
    known = {id(entry) for _, _, entry, _ in _hooks(config)}
    repos = config.get("repos")
    others: list[str] = []
    for repo in repos if isinstance(repos, list) else ():
        hooks = repo.get("hooks") if isinstance(repo, dict) else None
        for entry in hooks if isinstance(hooks, list) else ():
            if isinstance(entry, dict) and id(entry) not in known:
                others.append(str(entry.get("id"))[:80])
    return others[:_MAX_NAMED] + (["..."] if len(others) > _MAX_NAMED else [])


def _candidate(
    package: str,
    hook_id: str,
    entry: Mapping[Any, Any],
    hook: Hook,
    chosen: Sequence[str],
    env: ProjectEnv,
    source: Source,
    pin: str,
) -> Candidate:
    args = entry.get("args", list(hook.args))
    kept = tuple(a for a in args if a not in hook.fixing)
    handed = chosen if entry.get("pass_filenames", True) is not False else ()
    # assay adds its own options after the command's words: no `--` may end them, so a
    # path that reads as an option is spelt from the root.
    paths = tuple(f"./{p}" if p.startswith("-") else p for p in handed)
    words = (hook.executable, *hook.words, *kept, *paths)
    hit = recognise(words)
    argv = env.python_tool(hook.executable, *words[1:])
    return Candidate(
        kind=hook.kind,
        argv=argv,
        tool=hit.tool if hit is not None else "shell",
        name=hook.name
        or (hit.name if hit is not None and hit.name != "shell" else hook.executable),
        ecosystem=Ecosystem.PYTHON,
        origin=Origin.CI,
        source=source,
        reason=(
            f"the project's CI runs its pre-commit hook {hook_id} ({package} {pin}), "
            f"on the {len(paths)} files it is handed"
        ),
        stated=(words,),
    )


def _left_out(entry: Mapping[Any, Any]) -> str | None:
    """Why a hook is not run as its repository defines it, if it is not."""
    if "entry" in entry or "language" in entry:
        return "it sets its own entry or language: not the command its repository runs"
    stages = entry.get("stages")
    if isinstance(stages, list) and not _RUN_STAGES & {str(s) for s in stages}:
        return "it runs only at other stages than `pre-commit run --all-files` does"
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        return "its `args` is not a list of words"
    if not isinstance(entry.get("additional_dependencies", []), list):
        return "its `additional_dependencies` is not a list"
    return None


def _hooks(config: Mapping[Any, Any]) -> list[tuple[str, str, Mapping[Any, Any], Hook]]:
    from assay.tools.python_requirements import pre_commit_tools

    found: list[tuple[str, str, Mapping[Any, Any], Hook]] = []
    for package, repo in pre_commit_tools(config):
        hooks = repo.get("hooks")
        for entry in hooks if isinstance(hooks, list) else ():
            hook_id = entry.get("id") if isinstance(entry, dict) else None
            hook = HOOKS.get((package, hook_id)) if isinstance(hook_id, str) else None
            if hook is not None and isinstance(entry, dict) and isinstance(hook_id, str):
                found.append((package, hook_id, entry, hook))
    return found


def _config(root: Path) -> dict[Any, Any]:
    from assay.tools.python_requirements import read_pre_commit_config

    return read_pre_commit_config(root)
