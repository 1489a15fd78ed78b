"""The arguments a project's pre-commit hook runs mypy with, for a configured mypy.

Where no command of the project runs mypy, a `[tool.mypy]` section is run as configured
(`assay.discovery.python`). A project that type-checks through pre-commit's mypy mirror runs
it with the hook's `args`, and a hook that sets none runs with the mirror's own:
`--ignore-missing-imports`. marko's hook installs type stubs but not `objprint`, an optional
extra its code imports: its maintainers' mypy ignores the import it cannot follow, and run
without that flag mypy reported the module missing (UNVERIFIED) on a pristine tree.

Only options are taken, each with its value: what the hook checks is the files
pre-commit hands it, which the configured mypy's own targets stand for.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["MIRROR_ARGS", "mypy_hook_args"]

#: The mirror's hook definition's `args` (pre-commit/mirrors-mypy's .pre-commit-hooks.yaml),
#: without `--scroll-output`, which only shapes what a terminal shows.
MIRROR_ARGS = ("--ignore-missing-imports",)
#: Most arguments taken from a hook.
_MAX_ARGS = 32


def mypy_hook_args(root: Path) -> tuple[str, ...] | None:
    """The options the project's pre-commit mypy hook runs mypy with, or None when it has
    no such hook (or its `args` is not a list of words)."""
    from assay.tools.python_requirements import pre_commit_tools, read_pre_commit_config

    for package, repo in pre_commit_tools(read_pre_commit_config(root)):
        hooks = repo.get("hooks") if package == "mypy" else None
        for hook in hooks if isinstance(hooks, list) else ():
            if not isinstance(hook, dict) or hook.get("id") != "mypy":
                continue
            args = hook.get("args", list(MIRROR_ARGS))
            if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
                return None
            return _options(args[:_MAX_ARGS])
    return None


#: mypy's options that take the next word as their value.
_VALUED = frozenset(
    {
        "--config-file",
        "--python-version",
        "--platform",
        "--exclude",
        "--follow-imports",
        "--enable-error-code",
        "--disable-error-code",
        "--always-true",
        "--always-false",
        "--package-root",
    }
)
#: Options that name what to check: the configured mypy's targets say that.
_TARGETING = frozenset({"-p", "--package", "-m", "--module", "-c", "--command"})


def _options(args: list[str]) -> tuple[str, ...]:
    """The options of `args`, each with its value (`--config-file mypy.ini` stays whole);
    paths, and options that name what to check, are left out."""
    kept: list[str] = []
    at = 0
    while at < len(args):
        word = args[at]
        at += 1
        name, eq, _ = word.partition("=")
        if not word.startswith("-"):
            continue
        if name in _TARGETING:
            at += 0 if eq else 1
            continue
        kept.append(word)
        if name in _VALUED and not eq and at < len(args):
            kept.append(args[at])
            at += 1
    return tuple(kept)
