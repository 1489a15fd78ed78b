"""A check whose tool refused an option of the command it was given: a usage error.

Nothing of the code was checked: the tool stopped at its command line. assay adds options
to what a project states (JSON output, `--no-fix`, `-x`, an exclude list) and runs the
release of a tool the machine has, or one it chose by the tree's date; a release older or
newer than the one the command was written for refuses what it does not know (ruff before
0.0.291 refused `--output-format`, before 0.16 `ruff format --extend-exclude`: tabulate's
clean tree FAILED). Such a run is no verdict on the code (`toolchain_missing`,
UNVERIFIED), and the note names the option, so a release that knows it can be installed.

Only an option the command really holds counts, as each argument parser words it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["option_plugin", "refused_option"]

#: How argument parsers say they do not know an option, the option in group `option`.
_REFUSALS = (
    # argparse (pytest, mypy, flake8, pylint): "error: unrecognized arguments: --x --y"
    re.compile(r"error: unrecognized arguments?: (?P<option>-\S+)"),
    # click and optparse: "Error: No such option: --x", "error: no such option: --x"
    re.compile(r"[Nn]o such option:? '?(?P<option>-[\w-]+)"),
    # clap (ruff, cargo): "error: unexpected argument '--x' found"
    re.compile(r"unexpected argument '(?P<option>-[^'\s]+)' found"),
    # commander and cac (eslint's successors, vitest): "error: unknown option '--x'",
    # "Unknown option `--x`"
    re.compile(r"[Uu]nknown option:? ['`\"]?(?P<option>-[\w-]+)"),
    # Go's flag package: "flag provided but not defined: -x"
    re.compile(r"flag provided but not defined: (?P<option>-[\w-]+)"),
    # tsc: "error TS5023: Unknown compiler option '--x'."
    re.compile(r"Unknown compiler option '(?P<option>-[\w-]+)'"),
    # eslint (optionator): "Invalid option '--x' - perhaps you meant"
    re.compile(r"Invalid option '(?P<option>-[\w-]+)'"),
)


def refused_option(output: str, argv: Sequence[str]) -> str | None:
    """The option of `argv` that the tool's `output` says it does not know, or None."""
    for pattern in _REFUSALS:
        for found in pattern.finditer(output):
            option = found["option"].rstrip(".,;:'\"`")
            if any(word == option or word.startswith(option + "=") for word in argv):
                return option
    return None


#: pytest options a plugin adds, by the distribution that has it: refused, the plugin is
#: missing, not the release of pytest (installer's nox session runs `pytest -n auto`).
PYTEST_PLUGIN_OPTIONS = {
    "-n": "pytest-xdist",
    "--numprocesses": "pytest-xdist",
    "--dist": "pytest-xdist",
    "--maxprocesses": "pytest-xdist",
    "--cov": "pytest-cov",
    "--cov-report": "pytest-cov",
    "--cov-fail-under": "pytest-cov",
    "--cov-config": "pytest-cov",
    "--no-cov": "pytest-cov",
    "--timeout": "pytest-timeout",
    "--reruns": "pytest-rerunfailures",
    "--only-rerun": "pytest-rerunfailures",
    "--asyncio-mode": "pytest-asyncio",
    "--randomly-seed": "pytest-randomly",
    "--randomly-dont-reorganize": "pytest-randomly",
    "--benchmark-skip": "pytest-benchmark",
    "--benchmark-disable": "pytest-benchmark",
    "--benchmark-only": "pytest-benchmark",
    "--mypy": "pytest-mypy",
    "--snapshot-update": "syrupy",
    "--forked": "pytest-forked",
    "--doctest-plus": "pytest-doctestplus",
}


def option_plugin(tool: str | None, option: str) -> str | None:
    """The plugin that adds `option` to `tool`, where one is known; else None."""
    return PYTEST_PLUGIN_OPTIONS.get(option) if tool == "pytest" else None
