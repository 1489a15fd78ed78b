"""Detector 3b: tox and nox environments, read statically for the commands they run.

A project whose test command lives only in tox.ini or noxfile.py still gets
that command, run directly in the project's environment: tox and nox would
build fresh virtualenvs (slow, networked), which verification must not need.
The noxfile is parsed with `ast`, never imported.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace

from assay.discovery.command_lines import (
    SCRIPT_KINDS,
    candidate_from,
    is_python,
    recognise_line,
    split_commands,
)
from assay.discovery.files import RepoFiles
from assay.discovery.model import (
    Candidate,
    DetectorReport,
    Dropped,
    Ecosystem,
    FileParser,
    Origin,
    ProjectEnv,
    Source,
    parsed_report,
)
from assay.discovery.text import line_of, one_line
from assay.tools.tox_config import TOX_FILES, read_tox, tox_source
from assay.verdict import Kind

NAME = "tox-nox"

#: A command tox or nox states outranks a tool merely configured (`[tool.pytest]`): it is
#: what the maintainers run, with the environment they run it in.
STATED_COST = 0

#: tox environment names (after `testenv:`) and the kind their commands answer.
_ENV_KINDS: dict[str, Kind] = {
    **SCRIPT_KINDS,
    "": Kind.TEST,  # the bare [testenv], and tox 4's env_run_base
    "py": Kind.TEST,
    "unit": Kind.TEST,
    "type": Kind.TYPECHECK,
    "typing": Kind.TYPECHECK,
    "flake8": Kind.LINT,
    "style": Kind.LINT,
    "ruff": Kind.LINT,
    "pre-commit": Kind.LINT,
}


def env_kind(name: str) -> Kind | None:
    """The kind a tox env or nox session named `name` answers, if its name (or, for
    `py311-lint`, one of its factors) says."""
    name = name.lower()
    for part in (name, *name.split("-")):
        if part in _ENV_KINDS:
            return _ENV_KINDS[part]
        if re.fullmatch(r"py\d*|py3\d*|pypy3?\d*", part) or part.startswith("test"):
            return Kind.TEST
    return None


def parse_tox(
    text: str, path: str, env: ProjectEnv
) -> tuple[list[Candidate], list[Dropped], list[str]]:
    """Candidates from the `commands` of tox environments, each with its `setenv`. Pure."""
    config, error = read_tox(path, text)
    if config is None:
        return [], [], [error or f"{path}: not a tox configuration"]
    found: list[Candidate] = []
    dropped: list[Dropped] = []
    for tox_env in config.envs:
        kind = env_kind(tox_env.name)
        if kind is None:
            continue
        section_line = line_of(text, rf"^\[{re.escape(tox_env.section)}\]")
        for command in tox_env.commands:
            raw = command.raw.strip()
            source = Source(path, line_of(text, re.escape(raw[:40])) or section_line)
            if command.line is None:
                dropped.append(Dropped(raw, source, command.problem))
                continue
            if not command.line:
                continue
            why = f"command of tox env [{tox_env.section}]"
            candidate = _from_line(command.line, kind, env, source, why, dict(tox_env.setenv))
            if candidate is None:
                dropped.append(Dropped(command.line, source, f"not a {kind.value} command"))
            else:
                found.append(candidate)
    return found, dropped, []


def _from_line(
    line: str, kind: Kind, env: ProjectEnv, source: Source, why: str, extra_env: dict[str, str]
) -> Candidate | None:
    recognised = [r for r in recognise_line(line) if r.kind is kind]
    if recognised:
        hit = recognised[0]
        reason = f"{why}: {' '.join(hit.argv)}"
        candidate = candidate_from(
            hit, env, Origin.PYTHON_CONFIG, source, reason, extra_env=extra_env
        )
        return replace(candidate, cost=STATED_COST)
    if kind is not Kind.TEST:
        return None
    # An unrecognised test command (`python runtests.py`) is still the project's test
    # command; run it generically with the project's interpreter.
    try:
        words = split_commands(line)
    except ValueError:
        return None
    if len(words) != 1 or _is_setup_step(words[0]):
        return None
    argv = list(words[0])
    if is_python(argv[0]):
        argv[0] = env.python
    return Candidate(
        kind,
        tuple(argv),
        "shell",
        Ecosystem.PYTHON,
        Origin.PYTHON_CONFIG,
        source,
        f"{why}: {line}",
        env=extra_env,
        cost=STATED_COST,
    )


def _is_setup_step(words: list[str]) -> bool:
    joined = " ".join(words)
    return bool(
        re.search(
            r"\b(pip|install|sync|coverage (combine|report|html|xml)|rm|mkdir|echo)\b"
            # `setup.py test` is gone from setuptools; `setup.py anything` builds first.
            r"|(^|\s|/)setup\.py\b",
            joined,
        )
    )


def parse_noxfile(
    text: str, path: str, env: ProjectEnv
) -> tuple[list[Candidate], list[Dropped], list[str]]:
    """Candidates from `session.run(...)` calls with literal arguments in nox sessions. Pure."""
    try:
        tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return [], [], [f"{path}: not valid Python: {one_line(exc)}"]
    found: list[Candidate] = []
    dropped: list[Dropped] = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or not _is_nox_session(node):
            continue
        kind = env_kind(node.name)
        if kind is None:
            continue
        for call in ast.walk(node):
            words = _session_run_words(call)
            if words is None:
                continue
            source = Source(path, getattr(call, "lineno", None))
            line = " ".join(words)
            candidate = _from_line(line, kind, env, source, f"nox session {node.name!r}", {})
            if candidate is None:
                dropped.append(Dropped(line, source, f"not a {kind.value} command"))
            else:
                found.append(candidate)
    return found, dropped, []


def _is_nox_session(node: ast.FunctionDef) -> bool:
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Attribute) and target.attr == "session":
            return True
        if isinstance(target, ast.Name) and target.id == "session":
            return True
    return False


def _session_run_words(node: ast.AST) -> list[str] | None:
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "run"
    ):
        return None
    words = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    # Computed arguments (`*session.posargs`) are left out; nothing literal means no command.
    return words or None


PARSERS: dict[str, FileParser] = {"tox.ini": parse_tox, "noxfile.py": parse_noxfile}


def detect(files: RepoFiles, env: ProjectEnv) -> DetectorReport:
    texts, errors = files.read_texts((*TOX_FILES, "noxfile.py"))
    # tox reads the first of tox.ini, setup.cfg, pyproject.toml, tox.toml that configures it;
    # the other files' problems are other detectors' to report.
    tox = tox_source(texts)
    parsers: dict[str, FileParser] = {"noxfile.py": parse_noxfile}
    if tox is not None:
        parsers[tox] = parse_tox
    read = {path: text for path, text in texts.items() if path in parsers}
    errors = [e for e in errors if e.split(":", 1)[0] in (*parsers, "tox.ini")]
    return parsed_report(NAME, parsers, read, errors, env)
