"""A check whose tool stopped because the configuration file its command names is not there.

Nothing of the code was checked: the tool stopped at its command line. wcwidth's tox runs
`pylint --rcfile={toxinidir}/.pylintrc`, and its sdist leaves `.pylintrc` out: pylint
exits 32 ("The config file .pylintrc doesn't exist!") and the lint read as FAILED on a
clean tree. Such a run is no verdict on the code (`toolchain_missing`, UNVERIFIED), and
the note names the file, so that it can be restored.

Only a file the command really names counts, as each tool words it. A tool that looks for
its configuration where it lives, named by no command, and finds none stopped as early:
ts-dedent 2.2.0's npm tarball leaves `.eslintrc` out, its `lint` script (`eslint .`, and
its `pretest` hook with it) stops at "ESLint couldn't find a configuration file", and the
lint read as FAILED, the tests as an exit whose output does not say why.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

__all__ = ["missing_config", "no_config_found"]

#: How tools say the configuration file they were given does not exist, in group `file`.
_MISSING = (
    # pylint: "The config file .pylintrc doesn't exist!"
    re.compile(r"The config file (?P<file>\S+) doesn't exist!"),
    # flake8: "The specified config file does not exist: setup.cfg"
    re.compile(r"The specified config file does not exist: (?P<file>\S+)"),
    # mypy: "mypy: error: Cannot find config file 'mypy.ini'"
    re.compile(r"Cannot find config file '(?P<file>[^']+)'"),
    # ruff: "The path `ruff.toml` does not point to a configuration file"
    re.compile(r"The path `(?P<file>[^`]+)` does not point to a configuration file"),
    # pytest: "ERROR: Config file '/abs/pytest.ini' not found."
    re.compile(r"Config file '(?P<file>[^']+)' not found"),
)


def missing_config(output: str, argv: Sequence[str]) -> str | None:
    """The configuration file `argv` names that the tool's `output` says does not exist,
    as the command names it; None if it says no such thing of a file the command names."""
    for pattern in _MISSING:
        for found in pattern.finditer(output):
            named = _named(found["file"], argv)
            if named is not None:
                return named
    return None


def _named(file: str, argv: Sequence[str]) -> str | None:
    """The word of `argv` (alone, or an option's `=value`) that is `file`, or ends with it
    as a path: pytest says the absolute path of what the command named relatively."""
    for word in argv:
        value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
        if value and (value == file or file.endswith(os.sep + value.lstrip("./"))):
            return value
    return None


#: ESLint finding no configuration where it looks for one: "ESLint couldn't find a
#: configuration file." (up to 8), "... an eslint.config.(js|mjs|cjs) file." (9 on).
_NONE_FOUND = re.compile(
    r"^ESLint couldn't find (?:a configuration file|an (?P<file>eslint\.config\.\S+) file)\.",
    re.MULTILINE,
)


def no_config_found(output: str) -> str | None:
    """The configuration a tool looked for where it lives and did not find, as a reader
    would restore it; None if it says no such thing."""
    found = _NONE_FOUND.search(output)
    if found is None:
        return None
    if found["file"]:
        return f"an ESLint configuration file ({found['file']})"
    return "an ESLint configuration file (.eslintrc.*, or eslintConfig in package.json)"
