"""Keeping what is no author's code out of flake8's and ruff's walks: the environment
`assay verify --install` made, and the version file a build backend writes
(`assay.tools.python_version_files`).

The install makes `.venv` in the workspace, where the project's clone has none (its
maintainers' environments live in `.tox`, or outside the tree in CI). flake8 lints every
directory of its paths that no exclusion names, its defaults do not name `.venv`, and a
project's own `exclude` replaces those defaults. So a bare `flake8` would lint pip,
setuptools and every dependency: thousands of findings, or a check killed at its deadline,
on a tree its maintainers find clean (cachetools 5.5.0: `exclude = .git, .tox, build`).

flake8 uses one `exclude`: the command line's last, else its configuration file's, else
its defaults. The environment is added to whichever it would use, so that the project's own
exclusions stay as they are (`--exclude`, which every flake8 has, rather than
`--extend-exclude`, which flake8 3.7 and older refuse). Configuration files are read as
untrusted (no links, bounded size), as flake8 finds them: `--isolated` reads none,
`--config` names one, and otherwise the first of `setup.cfg`, `tox.ini` and `.flake8` with
a `[flake8]` section, from the check's directory up to the workspace's root.

ruff's defaults name `.venv`, but a project's `exclude` replaces them too (tenacity 9.2.1
linted sphinx and urllib3). ruff's `--extend-exclude` on the command line adds to what the
configuration leaves out, its `extend-exclude` included; it is added only where the walk
reaches what it names (no paths given, or a path that holds it): a command naming its own
paths (`ruff format --check src tests`, bleach 6.4.0) never walks into the environment at
the root. `ruff format` refuses the option before ruff 0.16 and is given the setting as a
`--config` override instead.
"""

from __future__ import annotations

import configparser
import json
import os
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from assay.evidence import Check
from assay.option_values import last_value
from assay.untrusted_files import read_untrusted

__all__ = ["exclude_from_lint_walks", "exclude_installed_env", "flake8_exclusions", "runs_tool"]

#: flake8's own `exclude` (`flake8.defaults.EXCLUDE`; `.nox` since 3.8, harmless before).
FLAKE8_DEFAULT_EXCLUDE = (
    ".svn",
    "CVS",
    ".bzr",
    ".hg",
    ".git",
    "__pycache__",
    ".tox",
    ".nox",
    ".eggs",
    "*.egg",
)
#: The files flake8 looks for its configuration in, in its order.
FLAKE8_CONFIGS = ("setup.cfg", "tox.ini", ".flake8")
#: Largest configuration file read.
MAX_CONFIG_BYTES = 1024 * 1024

_OPTION = "--exclude"
_RUFF_OPTION = "--extend-exclude"
# flake8's own list syntax (`comma_separated_list`): commas and whitespace alike.
_SEPARATORS = re.compile(r"[,\s]+")


def exclude_installed_env(checks: Sequence[Check], root: Path, env_dir: str) -> list[Check]:
    """`checks`, each flake8 and ruff check told to leave `env_dir` (the environment the
    install made at the workspace's root) out, beside what the project already leaves out."""
    return exclude_from_lint_walks(checks, root, [env_dir])


def exclude_from_lint_walks(
    checks: Sequence[Check], root: Path, paths: Sequence[str]
) -> list[Check]:
    """`checks`, each flake8 and ruff check told to leave `paths` out, beside what the
    project already leaves out: names (`.venv`) wherever they are, paths with a `/`
    (relative to the workspace at `root`) as seen from the check's directory."""
    prepared = []
    for check in checks:
        wanted = [p for p in (_seen_from(check.cwd, path) for path in paths) if p is not None]
        if wanted and runs_tool(check.argv, "flake8"):
            excluded = flake8_exclusions(root, check, "exclude")
            known = excluded + flake8_exclusions(root, check, "extend-exclude")
            if new := [p for p in wanted if p not in known]:
                option = f"{_OPTION}={','.join(dict.fromkeys([*excluded, *new]))}"
                check = replace(check, argv=_with_option(check.argv, option))
        elif wanted and runs_tool(check.argv, "ruff"):
            given = last_value(check.argv, {_RUFF_OPTION}, stop_at_double_dash=True)
            walked = _ruff_paths(check.argv)
            reached = [p for p in wanted if _walk_reaches(walked, p)]
            if new := [p for p in reached if given is None or p not in _split(given)]:
                check = replace(check, argv=_with_option(check.argv, _ruff_exclusion(check, new)))
        prepared.append(check)
    return prepared


#: ruff's options (`check`'s and `format`'s) whose value may be the next word.
_RUFF_VALUED = frozenset(
    {
        "--config",
        "--select",
        "--extend-select",
        "--ignore",
        "--extend-ignore",
        "--fixable",
        "--unfixable",
        "--extend-fixable",
        "--exclude",
        "--extend-exclude",
        "--per-file-ignores",
        "--extend-per-file-ignores",
        "--output-format",
        "-o",
        "--output-file",
        "--target-version",
        "--line-length",
        "--dummy-variable-rgx",
        "--cache-dir",
        "--stdin-filename",
        "--range",
    }
)


def _ruff_exclusion(check: Check, paths: Sequence[str]) -> str:
    """The option that adds `paths` to what a ruff check leaves out. `ruff format` refuses
    `--extend-exclude` before ruff 0.16 (tabulate's pre-commit pins 0.15.4), but every ruff
    since 0.2.2 takes the setting as an override, which joins the configuration's own."""
    if _ruff_words(check.argv)[:1] == ["format"]:
        return f"--config=extend-exclude={json.dumps(list(paths))}"
    return f"{_RUFF_OPTION}={','.join(paths)}"


def _ruff_words(argv: Sequence[str]) -> list[str]:
    """What follows `ruff` (or `python -m ruff`) in `argv`."""
    return list(argv[3:] if len(argv) >= 3 and argv[1] == "-m" else argv[1:])


def _ruff_paths(argv: Sequence[str]) -> list[str]:
    """The paths a ruff command walks (after its subcommand, if it names one)."""
    words = _ruff_words(argv)
    if words[:1] in (["check"], ["format"]):
        words = words[1:]
    paths: list[str] = []
    takes_value = False
    for word in words:
        if takes_value:
            takes_value = False
        elif word == "--":
            continue
        elif word.startswith("-"):
            takes_value = word in _RUFF_VALUED
        else:
            paths.append(word)
    return paths


def _walk_reaches(walked: Sequence[str], path: str) -> bool:
    """Whether a walk of `walked` (none: the working directory) reaches `path` (a name
    without `/` is the environment at the root, else a path from the working directory)."""
    if not walked:
        return True
    for top in (os.path.normpath(w) for w in walked):
        if top == "." or ("/" in path and (path == top or path.startswith(top + "/"))):
            return True
    return False


def _seen_from(cwd: str, path: str) -> str | None:
    """`path` as a pattern for a tool run in `cwd` (both relative to the workspace's root);
    None when it is not beneath `cwd`."""
    if "/" not in path:
        return path
    seen = os.path.relpath(path, os.path.normpath(cwd))
    return None if seen == os.pardir or seen.startswith(os.pardir + os.sep) else seen


def flake8_exclusions(root: Path, check: Check, option: str) -> list[str]:
    """The `exclude` or `extend-exclude` (`option`) flake8 would use for `check` in the
    workspace at `root`, as patterns that mean the same on its command line (relative to
    the check's directory)."""
    argv = check.argv
    given = last_value(argv, {f"--{option}"}, stop_at_double_dash=True)
    if given is not None:
        return _split(given)
    default = list(FLAKE8_DEFAULT_EXCLUDE) if option == "exclude" else []
    found = (
        None
        if "--isolated" in argv
        else _config(root, check.cwd, last_value(argv, {"--config"}, stop_at_double_dash=True))
    )
    if found is None or not found[0].has_section("flake8"):
        return default
    parser, config_dir = found
    # flake8 registers each option under both spellings; the file's last one is used.
    spellings = (option, option.replace("-", "_"))
    values = [v for k, v in parser.items("flake8") if k in spellings]
    if not values:
        return default
    to_config = os.path.relpath(config_dir, os.path.normpath(check.cwd))
    # flake8 resolves a pattern with a `/` against the file's directory, the command
    # line's against the working directory: such a pattern is rebased.
    return [
        os.path.join(to_config, p) if "/" in p and to_config != "." else p
        for p in _split(values[-1])
    ]


def runs_tool(argv: Sequence[str], tool: str) -> bool:
    """Whether `argv` runs `tool`, by name or as `python -m tool`."""
    if not argv:
        return False
    if os.path.basename(argv[0]) == tool:
        return True
    return (
        len(argv) >= 3
        and os.path.basename(argv[0]).startswith("python")
        and argv[1] == "-m"
        and argv[2] == tool
    )


def _with_option(argv: tuple[str, ...], option: str) -> tuple[str, ...]:
    """`argv` with `option` last among its options (argparse keeps the last), before a `--`
    that ends them."""
    if "--" in argv:
        at = argv.index("--")
        return (*argv[:at], option, *argv[at:])
    return (*argv, option)


def _split(value: str) -> list[str]:
    return [p.rstrip("/") or p for p in _SEPARATORS.split(value.strip()) if p]


def _config(
    root: Path, cwd: str, named: str | None
) -> tuple[configparser.RawConfigParser, str] | None:
    """The configuration flake8 would read for a check run in `cwd` (relative to `root`),
    and its directory (relative to `root`); None when it would read none."""
    if named is not None:
        rel = os.path.normpath(os.path.join(cwd, named))
        parser = _parsed(root, rel)
        return None if parser is None else (parser, os.path.dirname(rel) or ".")
    here = os.path.normpath(cwd)
    while not here.startswith(".."):
        pyproject = _pyproject_section(
            root, "pyproject.toml" if here == "." else f"{here}/pyproject.toml"
        )
        if pyproject is not None:
            return pyproject, here
        for name in FLAKE8_CONFIGS:
            parser = _parsed(root, name if here == "." else f"{here}/{name}")
            if parser is not None and (
                parser.has_section("flake8") or parser.has_section("flake8:local-plugins")
            ):
                return parser, here
        if here == ".":
            break
        here = os.path.dirname(here) or "."
    return None


def _parsed(root: Path, rel: str) -> configparser.RawConfigParser | None:
    if rel.startswith("..") or os.path.isabs(rel):
        return None
    data = read_untrusted(root, rel, limit=MAX_CONFIG_BYTES)
    if not isinstance(data, bytes):
        return None
    parser = configparser.RawConfigParser()  # as flake8 reads it: no interpolation
    try:
        parser.read_string(data.decode("utf-8"), source=rel)
    except (UnicodeDecodeError, configparser.Error):
        return None  # flake8 skips such a file (or stops on it: then nothing is lost)
    return parser


def _pyproject_section(root: Path, rel: str) -> configparser.RawConfigParser | None:
    """pyproject.toml's `[tool.flake8]`, as the Flake8-pyproject plugin gives it to flake8
    (before its own files: isort 9.0.2 keeps `exclude = "_vendored"` there), in a parser of
    its own; None without one."""
    import tomllib

    data = read_untrusted(root, rel, limit=MAX_CONFIG_BYTES)
    if not isinstance(data, bytes) or b"flake8" not in data:
        return None
    try:
        table = tomllib.loads(data.decode("utf-8")).get("tool", {}).get("flake8")
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError, AttributeError):
        return None
    if not isinstance(table, dict):
        return None
    parser = configparser.RawConfigParser()
    parser.add_section("flake8")
    for key, value in table.items():
        items = value if isinstance(value, list) else [value]
        parser.set("flake8", str(key).lower(), ",".join(str(v) for v in items))
    return parser
