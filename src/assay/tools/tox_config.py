"""tox's configuration as data: each environment's commands, `setenv`, `deps` and `extras`.

Read from the first of tox.ini, setup.cfg (`[tox:tox]`), pyproject.toml (`[tool.tox]`,
its `legacy_tox_ini` or native tables) and tox.toml, as tox itself picks. Nothing is
run or imported. tox's substitutions are filled in the way a developer's plain
`tox -e NAME` would: `{posargs}` takes its default, `{toxinidir}` is the root,
`{env:X:default}` the environment's own setting or the default; a line that needs
what only tox knows (`{envtmpdir}`, `{envsitepackagesdir}`) is kept with the reason.
Lines under factor conditions (`py38: ...`, `!pure: ...`) are kept when the
environment's name satisfies them; the bare `[testenv]` has no factors. An environment that
`[tox] env_list` names and no section defines is the bare `[testenv]` under its name.

Pure: every function takes text and returns values.
"""

from __future__ import annotations

import configparser
import itertools
import json
import posixpath
import re
import shlex
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from assay.substitution import MAX_FILLED_CHARS, bounded_sub

#: Where tox looks for its configuration, in the order it looks.
TOX_FILES = ("tox.ini", "setup.cfg", "pyproject.toml", "tox.toml")

#: How deep `{[section]key}` references are followed.
MAX_REFERENCE_DEPTH = 5
#: Lines of one environment's commands or deps read; a section whose lines each name it
#: again, spliced up to the bound, was thousands of commands each filled in: 2-6 s to plan.
MAX_SETTING_LINES = 256
#: Most environments taken from `[tox] env_list` (generative names multiply).
MAX_LISTED_ENVS = 64

_BRACE = re.compile(r"\{([^{}]*)\}")
# `py38: cmd`, `!pure-py3: X=1`, `lint,flake8: cmd`, `py3{8,9}: cmd`
_CONDITION = re.compile(r"^([!A-Za-z0-9_][!A-Za-z0-9_.{},-]*):\s+(.*)$", re.DOTALL)
_BRACES_ALTERNATIVES = re.compile(r"\{([^{}]*)\}")
# One name of an `env_list`: commas and line breaks separate them, except inside braces.
_LIST_ITEM = re.compile(r"(?:[^,\s{}]|\{[^{}]*\})+")
#: Placeholders tox fills with values a plain run in the tree can stand in for.
_PLAIN = {
    "toxinidir": ".",
    "tox_root": ".",
    "toxworkdir": ".tox",
    "work_dir": ".tox",
    "envpython": "python",
    "env_python": "python",
    "basepython": "python",
    "base_python": "python",
    "/": "/",
    ":": ":",
}
_UNRESOLVED = "\x00"
#: What a placeholder too long to fill in is named as (`substitution.MAX_FILLED_CHARS`).
_TOO_LONG = "a value longer than assay fills in"
#: What `{env_site_packages_dir}/` in a command becomes: a mark the detector, which sees
#: the tree, replaces with the directory that holds the package (`python_envs`).
SITE_PACKAGES = "\x01site-packages/"
#: The project's package as tox installs it (boltons' `pytest --doctest-modules
#: {env_site_packages_dir}/boltons`): the tree's own copy, at the root or in `src/`.
_SITE_PACKAGES_DIR = re.compile(r"\{(?:envsitepackagesdir|env_site_packages_dir)\}/")
#: pytest's `--basetemp` in tox's own temporary directory (`--basetemp={envtmpdir}`, the
#: idiom pytest's docs gave for tox): it says where temporary files go, not which tests run,
#: and without it pytest picks a directory of its own; left out rather than losing the line.
_TEMP_OPTION = re.compile(
    r"(?<!\S)--basetemp(?:=|\s+)[\"']?\{(?:envtmpdir|env_tmp_dir)\}[^\s\"']*[\"']?(?!\S)"
)
#: pytest-cov's options with a tox placeholder (`--cov {envsitepackagesdir}/pkg`): assay
#: leaves coverage options out anyway, so they do not make the line one only tox can run.
_COVERAGE_OPTION = re.compile(
    r"(?<!\S)--cov(?:-config|-report)?(?:=|\s+)[\"']?[^\s\"']*\{[^}\s]*\}[^\s\"']*[\"']?(?!\S)"
)


@dataclass(frozen=True, slots=True)
class ToxCommand:
    """One line of an environment's `commands`."""

    raw: str
    """As written (for finding its line in the file)."""
    line: str | None
    """With tox's placeholders filled in; None when it needs what only tox knows."""
    problem: str = ""


@dataclass(frozen=True, slots=True)
class ToxEnv:
    """One tox environment as a plain run in the tree would see it."""

    name: str
    """`lint` for `[testenv:lint]`; "" for the bare `[testenv]`."""
    section: str
    commands: tuple[ToxCommand, ...] = ()
    setenv: Mapping[str, str] = field(default_factory=dict)
    deps: tuple[str, ...] = ()
    """Requirement lines (`pytest>=7`, `-r requirements-dev.txt`), placeholders filled."""
    extras: tuple[str, ...] = ()
    change_dir: str | None = ""
    """Where its commands run, relative to the root (`changedir = src`): "" the root; None
    a directory only tox knows (`{envtmpdir}`) or one outside the tree."""
    base_python: str = ""
    """The interpreter tox would make the environment with: `base_python`, else the one its
    name says (`py38` -> `python3.8`); "" when neither says."""
    commands_pre: tuple[ToxCommand, ...] = ()
    """What tox runs before `commands` (wcwidth builds its C extension in place there)."""


@dataclass(frozen=True, slots=True)
class ToxConfig:
    path: str
    envs: tuple[ToxEnv, ...]
    listed: frozenset[str] | None = None
    """The environments `env_list` names (what a bare `tox` runs); None without one."""
    mapped: str = ""
    """The text of the tables that map CI's interpreters to environments (`[gh-actions]`,
    `[gh]`): the environments CI runs through tox-gh-actions or tox-gh."""

    @property
    def newest_listed_python(self) -> tuple[int, int] | None:
        """The newest CPython `env_list` names (`py37` -> (3, 7)), when every interpreter
        factor it has names a release; None when it names none, or any Python 3 at all
        (`py3`), which is whatever Python 3 is there."""
        versions = []
        for name in self.listed or ():
            for factor in name.split("-"):
                match = _INTERPRETER_FACTOR.fullmatch(factor)
                if match is None or match["impl"] != "py":
                    continue
                if match["major"] == "3" and not match["minor"]:
                    return None
                versions.append((int(match["major"]), int(match["minor"] or 0)))
        return max(versions, default=None)

    def opt_in(self, env: ToxEnv) -> bool:
        """Whether `env` runs only when asked for by name: `env_list` leaves it out."""
        return self.listed is not None and bool(env.name) and env.name not in self.listed

    def runs(self, env: ToxEnv, texts: Callable[[], Iterable[bytes]] | None) -> bool:
        """Whether the project runs `env`: `env_list` names it, tox-gh-actions' table maps
        to it, or a file where the project says what it runs (`texts`, read only if
        needed: a CI step's, make or just recipe's or pre-commit hook's `tox -e mypy`)
        names it. Without those texts to read, it may: True."""
        if not self.opt_in(env):
            return True
        word = re.compile(rf"(?<![\w.-]){re.escape(env.name)}(?![\w.-])")
        if texts is None or word.search(self.mapped):
            return True
        encoded = re.compile(word.pattern.encode())
        return any(encoded.search(text) for text in texts())


def tox_source(texts: Mapping[str, str]) -> str | None:
    """Which of `texts` (path -> text, for TOX_FILES) tox would read, or None."""
    for path in TOX_FILES:
        text = texts.get(path)
        if text is None:
            continue
        if path == "tox.ini" or path == "tox.toml":
            return path
        if path == "setup.cfg" and re.search(r"^\[tox:tox\]", text, re.MULTILINE):
            return path
        if path == "pyproject.toml" and re.search(r"^\[tool\.tox[\].]", text, re.MULTILINE):
            return path
    return None


def read_tox(path: str, text: str) -> tuple[ToxConfig | None, str | None]:
    """The environments of one tox configuration file; (None, message) when it is malformed."""
    if path.endswith(".toml"):
        try:
            data = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, ValueError, RecursionError) as exc:
            return None, f"{path}: not valid TOML: {exc}"
        tools = data.get("tool") if path == "pyproject.toml" else {"tox": data}
        table = tools.get("tox") if isinstance(tools, dict) else None
        if not isinstance(table, dict):
            return ToxConfig(path, ()), None
        legacy = table.get("legacy_tox_ini")
        if isinstance(legacy, str):
            return _read_ini(path, legacy)
        listed = table.get("env_list")
        names = (
            frozenset(n for n in listed if isinstance(n, str)) if isinstance(listed, list) else None
        )
        mapped = json.dumps(table.get("gh", ""), default=str)
        return ToxConfig(path, _native_envs(table), names or None, mapped), None
    return _read_ini(path, text)


# --------------------------------------------------------------------------- INI


def _read_ini(path: str, text: str) -> tuple[ToxConfig | None, str | None]:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text, source=path)
    except (configparser.Error, ValueError) as exc:
        message = " ".join(str(exc).split())[:200]
        return None, f"{path}: not a valid INI file: {message}"
    # One environment per name a section stands for: a generative section
    # (`[testenv:typing-{mypy,pyright}]`) is several, each taking its own factors' lines
    # (structlog's `mypy: mypy src`), as tox reads it.
    sections: dict[str, ToxEnv] = {}
    for section in parser.sections():
        if section == "testenv":
            sections[""] = _ini_env(parser, section, "")
        elif section.startswith("testenv:"):
            raw = section.partition(":")[2].strip()
            for name in itertools.islice(_generated(raw), MAX_LISTED_ENVS):
                sections.setdefault(name, _ini_env(parser, section, name))
    # The environments env_list names come first, in its order: among envs that run the
    # same commands, the first is the one planned, and a section of its own may be for
    # another interpreter (pyparsing's `[testenv:py314t-unit]` sets PYTHON_GIL=0, which a
    # Python without free threading refuses at start-up). An environment listed but given
    # no section of its own is the bare [testenv] run with its name's factors (`py312-mypy`
    # takes the `mypy: ...` lines).
    envs: list[ToxEnv] = []
    listed = _env_list(parser)
    for name in listed:
        if name in sections:
            envs.append(sections.pop(name))
        elif parser.has_section("testenv"):
            envs.append(_ini_env(parser, "testenv", name))
    mapped = "\n".join(
        value
        for section in parser.sections()
        if section in ("gh-actions", "gh-actions:env", "gh") or section.startswith("gh:")
        for value in parser[section].values()
    )
    envs = [*envs, *sections.values()]
    return ToxConfig(path, tuple(envs), frozenset(listed) if listed else None, mapped), None


def _env_list(parser: configparser.ConfigParser) -> list[str]:
    """The environments `[tox] env_list` names, generative names expanded, at most
    MAX_LISTED_ENVS of them."""
    value = next(
        (
            parser.get(section, key)
            for section in ("tox", "tox:tox")
            for key in ("env_list", "envlist")
            if parser.has_section(section) and parser.has_option(section, key)
        ),
        "",
    )
    names: dict[str, None] = {}
    for item in _LIST_ITEM.findall(value):
        for name in _generated(item.strip()):
            if len(names) >= MAX_LISTED_ENVS:
                return list(names)
            names.setdefault(name)
    return list(names)


def _generated(name: str) -> Iterator[str]:
    """The names a generative name stands for (`py3{8,9}-x` is `py38-x`, `py39-x`), lazily:
    a name with many braces stands for exponentially many."""
    parts = _BRACES_ALTERNATIVES.split(name)
    # split() with a group alternates text and brace contents: odd parts are alternatives.
    choices = [_spelt_out(part) if at % 2 else [part] for at, part in enumerate(parts)]
    for picked in itertools.product(*choices):
        joined = "-".join(f for f in "".join(picked).strip().split("-") if f)
        if joined:
            yield joined


#: A range among a generative name's alternatives (tox 4: `3.1{0-5}` is 3.10 to 3.15).
_RANGE = re.compile(r"(\d+)-(\d+)")
#: The most names one range stands for.
MAX_RANGE = 100


def _spelt_out(braced: str) -> list[str]:
    """The alternatives inside one pair of braces, each range (`0-5`) spelt out."""
    found: list[str] = []
    for item in braced.split(","):
        bounds = _RANGE.fullmatch(item.strip())
        if bounds is None or int(bounds[2]) - int(bounds[1]) > MAX_RANGE:
            found.append(item.strip())  # tox strips them: `py{38, 39}`
        else:
            found += [str(n) for n in range(int(bounds[1]), int(bounds[2]) + 1)]
    return found


def _ini_env(parser: configparser.ConfigParser, section: str, name: str) -> ToxEnv:
    def raw(key: str, *aliases: str) -> str:
        # `[testenv:x]` takes each setting it does not make itself from `[testenv]`.
        for where in (section, "testenv"):
            for option in (key, *aliases):
                if parser.has_section(where) and parser.has_option(where, option):
                    return parser.get(where, option)
        return ""

    factors = _factors(name)
    references = _References(parser)
    setenv: dict[str, str] = {}
    for line in _lines(raw("setenv", "set_env"), factors):
        var, sep, value = line.partition("=")
        var = var.strip()
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", var):
            continue  # `file|.env` and other forms a plain run cannot read
        filled = _fill(value.strip(), name, setenv, references)
        if _UNRESOLVED not in filled:
            setenv[var] = filled
    commands, commands_pre = (
        _env_commands(
            _lines(references.expand(raw(key)), factors, continued=True), name, setenv, references
        )
        for key in ("commands", "commands_pre")
    )
    deps = tuple(
        filled
        for line in _lines(references.expand(raw("deps")), factors)[:MAX_SETTING_LINES]
        if _UNRESOLVED not in (filled := _fill(line, name, setenv, references))
    )
    extras = tuple(
        e.strip()
        for line in _lines(raw("extras"), factors)
        for e in line.split(",")
        if re.fullmatch(r"[A-Za-z0-9_.-]+", e.strip())
    )
    change_dir = _change_dir(
        _fill(raw("changedir", "change_dir").strip(), name, setenv, references)
    )
    base_python = _base_python(raw("basepython", "base_python").strip(), name)
    return ToxEnv(
        name, section, commands, setenv, deps, extras, change_dir, base_python, commands_pre
    )


def _env_commands(
    lines: list[str], name: str, setenv: Mapping[str, str], references: _References
) -> tuple[ToxCommand, ...]:
    """The commands of an environment's `lines`; past `MAX_SETTING_LINES`, one that only
    tox can run, for no project's environment states that many."""
    if len(lines) > MAX_SETTING_LINES:
        problem = f"states {len(lines)} commands, more than assay reads: only tox can run them"
        return (ToxCommand(lines[0], None, problem),)
    return tuple(command for line in lines for command in _commands(line, name, setenv, references))


def _commands(
    line: str, name: str, setenv: Mapping[str, str], references: _References
) -> list[ToxCommand]:
    """The commands `line` states: several where a placeholder's value holds more than one
    line (filelock's `{posargs:` default runs pytest, then diff-cover), since tox fills
    placeholders before it splits commands."""
    made = _command(line, name, setenv, references)
    if made.line is None or "\n" not in made.line:
        return [made]
    first = made.raw.splitlines()[0]
    return [ToxCommand(first, part.strip()) for part in made.line.splitlines() if part.strip()]


def _command(
    line: str, name: str, setenv: Mapping[str, str], references: _References
) -> ToxCommand:
    raw = line
    line = line.lstrip("-").strip()  # `- cmd`: tox ignores its exit status; the command is the same
    line = re.sub(r"(^|\s)\[\](?=\s|$)", " ", line)  # tox 3's `[]` is `{posargs}`
    line = _COVERAGE_OPTION.sub(" ", _TEMP_OPTION.sub(" ", line))
    line = _SITE_PACKAGES_DIR.sub(SITE_PACKAGES, line)
    filled = _fill(line, name, setenv, references).strip()
    if _UNRESOLVED in filled:
        missing = filled.split(_UNRESOLVED)[1]
        return ToxCommand(raw, None, f"uses {{{missing}}}, which only tox can fill in")
    return ToxCommand(raw, filled)


class _References:
    """`{[section]key}`: another section's setting, spliced in as text."""

    def __init__(self, parser: configparser.ConfigParser) -> None:
        self.parser = parser
        # Each reference at each depth is spliced once: a section whose lines each name it
        # again was 60 ** MAX_REFERENCE_DEPTH splices, a plan that never ended.
        self.spliced: dict[tuple[str, int], str | None] = {}

    def get(self, reference: str, depth: int = 0) -> str | None:
        if (reference, depth) not in self.spliced:
            self.spliced[(reference, depth)] = self._get(reference, depth)
        return self.spliced[(reference, depth)]

    def _get(self, reference: str, depth: int) -> str | None:
        match = re.fullmatch(r"\[([^\]]+)\]\s*(\S+)", reference)
        if match is None or depth >= MAX_REFERENCE_DEPTH:
            return None
        section, key = match.groups()
        if not self.parser.has_section(section) or not self.parser.has_option(section, key):
            return None
        return self.expand(self.parser.get(section, key), depth + 1)

    def expand(self, value: str, depth: int = 0) -> str:
        """`value` with whole-line `{[section]key}` references replaced by their lines, as
        far as it stays within `MAX_FILLED_CHARS` (a section of lines that each name it
        again grows as a power of the depth)."""
        lines = []
        size = 0
        for line in value.splitlines():
            stripped = line.strip()
            if stripped.startswith("{[") and stripped.endswith("}") and size < MAX_FILLED_CHARS:
                spliced = self.get(stripped[1:-1], depth)
                if spliced is not None and size + len(spliced) <= MAX_FILLED_CHARS:
                    lines.append(spliced)
                    size += len(spliced) + 1
                    continue
            lines.append(line)
            size += len(line) + 1
        return "\n".join(lines)


def _lines(value: str, factors: frozenset[str], *, continued: bool = False) -> list[str]:
    """The non-empty lines of a multi-line setting whose factor conditions hold."""
    if continued:  # a trailing backslash continues a command on the next line
        value = re.sub(r"\\\n\s*", " ", value)
    kept = []
    for line in _braces_kept_whole(value.splitlines()) if continued else value.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        condition = _CONDITION.match(line)
        if condition is not None:
            if not _holds(condition.group(1), factors):
                continue
            line = condition.group(2).strip()
        kept.append(line)
    return kept


def _braces_kept_whole(lines: list[str]) -> list[str]:
    """`lines`, a `{...}` left open at a line's end joined with the lines up to its close:
    tox fills a placeholder before it splits commands, so its value may span lines."""
    joined: list[str] = []
    pending: list[str] = []
    for line in lines:
        if not pending and line.lstrip().startswith("#"):
            joined.append(line)
            continue
        pending.append(line)
        text = "\n".join(pending)
        if text.count("{") <= text.count("}"):
            joined.append(text)
            pending = []
    if pending:  # never closed: each line as it is
        joined.extend(pending)
    return joined


def _factors(name: str) -> frozenset[str]:
    return frozenset(f for f in name.split("-") if f)


def _holds(condition: str, factors: frozenset[str]) -> bool:
    """Whether `a-b,!c` holds for an environment with `factors` (any alternative, all of
    its factors; `!x` is x absent)."""
    for alternative in _alternatives(condition):
        wanted = [f for f in alternative.split("-") if f]
        if wanted and all(
            (f[1:] not in factors) if f.startswith("!") else (f in factors) for f in wanted
        ):
            return True
    return False


def _alternatives(condition: str) -> list[str]:
    """`py3{8,9}-x,lint` as `py38-x`, `py39-x`, `lint` (braces are tox's generative names)."""
    match = _BRACES_ALTERNATIVES.search(condition)
    if match is None:
        return condition.split(",")
    head, tail = condition[: match.start()], condition[match.end() :]
    return [a for part in match.group(1).split(",") for a in _alternatives(head + part + tail)]


def _fill(
    value: str,
    name: str,
    setenv: Mapping[str, str],
    references: _References | _NativeReferences | None,
) -> str:
    """`value` with tox's placeholders replaced, innermost first; an unknown one becomes
    `\\0name\\0` so that the caller can say which."""
    value = re.sub(r"\{(toxinidir|tox_root)\}/", "", value)
    value = re.sub(r"\{(envbindir|env_bin_dir)\}/", "", value)

    def one(match: re.Match[str]) -> str:
        key = match.group(1)
        if key in _PLAIN:  # before any split: `{:}` is the path separator
            return _PLAIN[key]
        word, sep, rest = key.partition(":")
        word = word.strip()
        if word == "posargs":
            return rest.strip() if sep else ""
        if word == "env" and sep:
            var, _, default = rest.partition(":")
            return setenv.get(var.strip(), default)
        if word == "tty" and sep:
            return rest.partition(":")[2]
        if word in ("envname", "env_name"):
            return name or "py"
        if word in _PLAIN:
            return _PLAIN[word]
        if key.startswith("[") and references is not None:
            found = references.get(key)
            if found is not None:
                return " ".join(found.split())
        return f"{_UNRESOLVED}{key}{_UNRESOLVED}"

    for _ in range(MAX_REFERENCE_DEPTH):
        filled = bounded_sub(_BRACE, one, value)
        if filled is None:  # a value naming another many times over: tox's alone to fill
            return f"{_UNRESOLVED}{_TOO_LONG}{_UNRESOLVED}"
        if filled == value:
            break
        value = filled
    return value


def _change_dir(filled: str | None) -> str | None:
    """A filled-in `change_dir` as a directory of the tree, relative to the root ("" the
    root itself); None for one only tox knows, or one outside the tree."""
    if filled is None or _UNRESOLVED in filled:
        return None
    where = re.sub(r"^\{(?:toxinidir|tox_root)\}$", "", filled.strip())
    if not where:
        return ""
    normal = posixpath.normpath(where)
    if posixpath.isabs(normal) or normal == ".." or normal.startswith("../"):
        return None
    return "" if normal == "." else normal


# --------------------------------------------------------------------------- native TOML


def _native_envs(table: Mapping[str, Any]) -> tuple[ToxEnv, ...]:
    """tox 4's TOML form: `env_run_base` (every environment) and `env.NAME` tables."""
    refs = _NativeReferences(table)
    base = table.get("env_run_base")
    base = base if isinstance(base, dict) else {}
    envs = [_native_env("", "env_run_base", base, {}, refs)]
    named = table.get("env")
    for name, settings in named.items() if isinstance(named, dict) else ():
        if isinstance(name, str) and isinstance(settings, dict):
            envs.append(_native_env(name, f"env.{name}", settings, base, refs))
    return tuple(envs)


class _NativeReferences:
    """tox's TOML references: `{ replace = "ref", of = ["vars", "src"] }` (or `env` and
    `key`: another environment's setting), as a setting's whole value or as one of a
    command's words; and `{[vars]src}` inside a string."""

    def __init__(self, table: Mapping[str, Any]) -> None:
        self.table = table

    def resolve(self, value: Any, depth: int = 0) -> Any:
        """`value`, or what it refers to when it is a reference; None for a reference that
        leads nowhere."""
        if not (isinstance(value, dict) and value.get("replace") == "ref"):
            return value
        if depth >= MAX_REFERENCE_DEPTH:
            return None
        path = value.get("of")
        env, key = value.get("env"), value.get("key")
        if path is None and isinstance(env, str) and isinstance(key, str):
            path = ["env", env, key]
        if not isinstance(path, list) or not all(isinstance(step, str) for step in path):
            return None
        found = self._at(path)
        if found is None and len(path) == 3 and path[0] == "env":
            found = self._at(["env_run_base", path[2]])  # what the env inherits
        return self.resolve(found, depth + 1)

    def _at(self, path: list[str]) -> Any:
        """The value at `path` in the configuration's tables; None where there is none."""
        found: Any = self.table
        for step in path:
            found = found.get(step) if isinstance(found, dict) else None
        return found

    def get(self, reference: str, depth: int = 0) -> str | None:
        """`{[section]key}` inside a string: a string setting of another table, as text."""
        match = re.fullmatch(r"\[([^\]]+)\]\s*(\S+)", reference)
        if match is None:
            return None
        section, key = match.groups()
        found = self.resolve({"replace": "ref", "of": [*section.split("."), key]}, depth)
        return found if isinstance(found, str) else None


def _native_env(
    name: str,
    section: str,
    settings: Mapping[str, Any],
    base: Mapping[str, Any],
    refs: _NativeReferences,
) -> ToxEnv:
    def get(key: str) -> Any:
        return refs.resolve(settings[key] if key in settings else base.get(key))

    set_env = get("set_env")
    if isinstance(set_env, list):  # tables merged in order, references among them
        merged: dict[str, Any] = {}
        for part in map(refs.resolve, set_env):
            merged.update(part if isinstance(part, dict) else {})
        set_env = merged
    setenv: dict[str, str] = {}
    for var, value in set_env.items() if isinstance(set_env, dict) else ():
        if isinstance(var, str) and isinstance(value, str):
            filled = _fill(value, name, setenv, refs)
            if _UNRESOLVED not in filled:
                setenv[var] = filled
    commands, commands_pre = (
        [_native_command(words, name, setenv, refs) for words in _native_commands(get(key), refs)]
        for key in ("commands", "commands_pre")
    )
    deps_listed = get("deps")
    deps = tuple(
        d
        for d in (deps_listed if isinstance(deps_listed, list) else ())
        if isinstance(d, str) and _UNRESOLVED not in _fill(d, name, setenv, refs)
    )
    extras_listed = get("extras")
    extras = tuple(e for e in (extras_listed or ()) if isinstance(e, str))
    directory = get("change_dir")
    spelt = _fill(directory, name, setenv, refs) if isinstance(directory, str) else None
    change_dir = "" if directory is None else _change_dir(spelt)
    stated = get("base_python")
    if isinstance(stated, list):  # tox.toml lists the interpreters to try, first first
        stated = next(iter(stated), "")
    base_python = _base_python(stated if isinstance(stated, str) else "", name)
    return ToxEnv(
        name,
        section,
        tuple(commands),
        setenv,
        deps,
        extras,
        change_dir,
        base_python,
        tuple(commands_pre),
    )


def _native_command(
    words: list[Any], name: str, setenv: Mapping[str, str], refs: _NativeReferences
) -> ToxCommand:
    raw = next((w for w in words if isinstance(w, str)), "")
    line = _native_words(words, name, setenv, refs)
    if line is None:
        return ToxCommand(raw, None, "uses a substitution only tox can fill in")
    return ToxCommand(raw, line)


#: An environment-name factor that names an interpreter tox would use: `py38`, `py312`,
#: `pypy3`, `pypy310`.
_INTERPRETER_FACTOR = re.compile(r"(?P<impl>py|pypy)(?P<major>\d)(?P<minor>\d*)")


def _base_python(stated: str, name: str) -> str:
    """The interpreter an environment is made with: `stated` (`basepython`), else the one a
    factor of its `name` says, else ""."""
    if stated and "{" not in stated:
        return stated
    for factor in name.split("-"):
        match = _INTERPRETER_FACTOR.fullmatch(factor)
        if match is not None:
            program = "python" if match["impl"] == "py" else "pypy"
            minor = f".{match['minor']}" if match["minor"] else ""
            return f"{program}{match['major']}{minor}"
    return ""


def _native_commands(listed: Any, refs: _NativeReferences) -> list[list[Any]]:
    """The command lines of a `commands` list, another list's spliced in where a reference
    stands for several."""
    lines: list[list[Any]] = []
    for entry in map(refs.resolve, listed if isinstance(listed, list) else ()):
        if isinstance(entry, list) and entry and all(isinstance(e, list) for e in entry):
            lines += entry  # another environment's `commands`
        elif isinstance(entry, list):
            lines.append(entry)
    return lines


def _native_words(
    words: list[Any], name: str, setenv: Mapping[str, str], refs: _NativeReferences
) -> str | None:
    out: list[str] = []
    for word in map(refs.resolve, words):
        if isinstance(word, list) and all(isinstance(w, str) for w in word):
            spliced = [_fill(w, name, setenv, refs) for w in word]  # a list of words, by `ref`
            if any(_UNRESOLVED in w for w in spliced):
                return None
            out += spliced
        elif isinstance(word, str):
            filled = _fill(_SITE_PACKAGES_DIR.sub(SITE_PACKAGES, word), name, setenv, refs)
            if _UNRESOLVED in filled:
                return None
            out.append(filled)
        elif isinstance(word, dict) and word.get("replace") in ("posargs", "env"):
            if word.get("replace") == "env" and word.get("name") in setenv:
                out.append(setenv[word["name"]])
                continue
            default = word.get("default", [])
            default = [default] if isinstance(default, str) else default
            if not isinstance(default, list) or not all(isinstance(d, str) for d in default):
                return None
            out += default
        else:
            return None
    return shlex.join(out) if out else None
