"""A warm mypy: a per-repository cache of mypy's, kept by assay outside the workspace.

Each workspace is a fresh copy without `.mypy_cache` (caches are never copied), so mypy
would start cold on every run (0.9 s against 0.29 s for a small project). Instead, the
repository gets a directory of its own under assay's state directory, named by the
repository's path and what decides the mypy that runs (its binary, interpreter and
packages: `probe_record.fingerprint`), which the mypy checks may write (under bubblewrap
every other check of the run sees it read-only: a test cannot plant an entry there) and
mypy is pointed at through `MYPY_CACHE_DIR` (a `cache_dir` of the project's own
configuration, or a `--cache-dir` in its command, still wins).

Why what is in it cannot decide a verdict wrongly:

- mypy uses a cached module when the source has the size and whole-second mtime it
  recorded, else only when its content hash is the same (and the same mypy version,
  options and Python version, all in its meta files). A workspace's times are its
  source's made a random 1 to 30 days older on every copy (`provision.workspace_age_ns`),
  so no mtime is the one recorded on an earlier run: every module is hashed, and an edit,
  however small and whatever its timestamps, is checked again. A planted type error is
  found on a warm run as on a cold one.
- It is used only where the repository's own configuration already decides what runs:
  never with `--base` or `--protect`, where a change is judged against a base it must
  not be able to influence. There, what the project's code could still write into it
  (a mypy plugin, which runs in mypy's process) gives it no power that editing its own
  configuration would not.
- One directory per repository path, never shared between repositories.
- Never where mypy may run code of the project's: plugins (`plugins` in its
  configuration), which run in mypy's process, or an interpreter it is told to ask for
  its search path (`python_executable`, `--python-executable`: mypy runs it, and a script
  of the tree is one). Such code can write the cache: entries for modules as a later
  tree will hold them (mypy believes a module's entry whose content hash matches) would
  let that later tree, the code gone, pass the type check unchecked. Without them mypy
  runs none of the project's code, and what it writes is its own.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Sequence
from pathlib import Path

from assay.evidence import Check
from assay.option_values import first_value
from assay.tool_caches import ToolCache

#: The variable mypy reads its default cache directory from.
MYPY_CACHE_ENV = "MYPY_CACHE_DIR"
#: Caches kept; the least recently used are removed past it.
MYPY_CACHES_KEPT = 16
#: Where under assay's state directory the caches live.
MYPY_CACHES = "mypy"

# Each mypy check its own directory: two mypy processes writing one cache at once (tox's
# `mypy src` beside `mypy tests`) can crash one of them with an INTERNAL ERROR.
MYPY = ToolCache("mypy", MYPY_CACHE_ENV, MYPY_CACHES, MYPY_CACHES_KEPT, per_check=True)


def type_checks(checks: Sequence[Check]) -> list[Check]:
    """The checks that run mypy."""
    return MYPY.checks(checks)


def mypy_cache_for(
    root: Path,
    checks: Sequence[Check],
    *,
    sandbox: str,
    judged_against_base: bool,
    state_dir: str | os.PathLike[str] | None = None,
) -> Path | None:
    """The warm cache directory for the mypy checks of the repository at `root` (made
    now), or None: no mypy check, a run judged against a base, or `none` (which runs in
    the tree, where mypy's own `.mypy_cache` is already warm), or mypy may run the
    project's code."""
    typed = type_checks(checks)
    if not typed or runs_project_code(root, typed):
        return None  # no mypy check (its configuration is not even read), or one may run code
    return MYPY.directory_for(
        root, checks, sandbox=sandbox, judged_against_base=judged_against_base, state_dir=state_dir
    )


def with_mypy_cache(checks: Sequence[Check], directory: Path | None) -> list[Check]:
    """`checks`, each mypy check told to keep its cache in `directory` (unless its own
    variables say where)."""
    return MYPY.told(checks, directory)


#: Where mypy reads its configuration from, in the order it looks: (file, section).
_CONFIG_FILES = (
    ("mypy.ini", "mypy"),
    (".mypy.ini", "mypy"),
    ("pyproject.toml", "tool.mypy"),
    ("setup.cfg", "mypy"),
)


#: mypy's settings that make it run code other than its own: plugins it imports, and an
#: interpreter it runs to learn that interpreter's search path.
_RUNS_CODE = ("plugins", "python_executable")


def runs_project_code(root: Path, checks: Sequence[Check]) -> bool:
    """Whether mypy, as `checks` run it in the repository at `root`, may run code that is
    not mypy's: a command names an interpreter for it, its configuration names plugins
    or an interpreter, or cannot be read (then it may)."""
    from assay.discovery.files import RepoFiles, UnreadableFile

    if any(w.split("=")[0] == "--python-executable" for c in checks for w in c.argv):
        return True
    if any(not _harmless(name) for check in checks for name in check.env):
        # mypy would look for its configuration where the check says (HOME,
        # XDG_CONFIG_HOME), or its interpreter would run code of the tree before mypy does
        # (a sitecustomize.py or a `.pth` on PYTHONPATH or PYTHONUSERBASE, a warning
        # category PYTHONWARNINGS imports): code that could add `--config-file` for a plugin
        # to the very command, with the cache writable.
        return True
    files = RepoFiles(str(root))
    places: dict[str, str] = {}
    for check in checks:
        named = _config_file(check)
        if named is not None:
            places[named] = "tool.mypy" if named.endswith(".toml") else "mypy"
            continue
        # Without `--config-file`, mypy takes the first configuration it finds from its
        # working directory up (`config_parser._find_config_file`): a check run in a
        # subdirectory reads that directory's `mypy.ini` before the root's. Every file it
        # could take is looked at, whichever it would take.
        directories = _up_to_root(check.cwd)
        if directories is None:
            return True  # runs outside the tree: what it reads there is not known
        for directory in directories:
            for name, section in _CONFIG_FILES:
                places.setdefault(posixpath.normpath(posixpath.join(directory, name)), section)
    for path, section in places.items() or _CONFIG_FILES:
        try:
            text = files.read_text(path)
        except UnreadableFile:
            return True
        if text is not None and _names_code(text, path, section):
            return True
    return False


#: The only variables a mypy check may set and keep the warm cache: none moves where mypy
#: or its interpreter looks for configuration or code (MYPYPATH names stubs, which mypy
#: reads and never runs). Any other may: HOME and XDG_CONFIG_HOME move mypy's user
#: configuration (`~/.mypy.ini`, `$XDG_CONFIG_HOME/mypy/config`) into the tree; PYTHONPATH
#: and PYTHONUSERBASE put its `sitecustomize.py` and `.pth` files on the interpreter's path.
_HARMLESS_VARS = frozenset(
    {
        "CI",
        "MYPYPATH",
        MYPY_CACHE_ENV,
        "MYPY_FORCE_COLOR",
        "MYPY_FORCE_TERMINAL_WIDTH",
        "FORCE_COLOR",
        "NO_COLOR",
        "TERM",
        "COLUMNS",
        "LANG",
        "TZ",
        "PYTHONUTF8",
        "PYTHONIOENCODING",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONHASHSEED",
    }
)


def _harmless(name: str) -> bool:
    return name in _HARMLESS_VARS or name.startswith("LC_")


def _up_to_root(cwd: str) -> list[str] | None:
    """`cwd` (relative to the root) and each directory above it up to the root, or None
    when `cwd` is not inside the tree."""
    here = posixpath.normpath(cwd or ".")
    if posixpath.isabs(here) or here == ".." or here.startswith("../"):
        return None
    found = []
    while True:
        found.append(here)
        if here == ".":
            return found
        here = posixpath.dirname(here) or "."


def _config_file(check: Check) -> str | None:
    """The configuration file a mypy command names (`--config-file X`)."""
    named = first_value(check.argv, {"--config-file"})
    return None if named is None else os.path.normpath(os.path.join(check.cwd, named))


def _names_code(text: str, path: str, section: str) -> bool:
    """Whether the configuration `text` (of `path`) sets one of `_RUNS_CODE` in `section`,
    or is not valid (then it may)."""
    if path.endswith(".toml"):
        import tomllib

        try:
            table = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, RecursionError):
            return True  # a table nested past the interpreter's depth is not read either
        tool = table.get("tool", {})
        mypy = tool.get("mypy", {}) if isinstance(tool, dict) else None
        return not isinstance(mypy, dict) or any(mypy.get(key) for key in _RUNS_CODE)
    from assay.discovery.text import load_ini

    parser, error = load_ini(text, path)
    if error:
        return True
    return any(
        parser.has_option(section, key) and bool(parser.get(section, key).strip())
        for key in _RUNS_CODE
    )
