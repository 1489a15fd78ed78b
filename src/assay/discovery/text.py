"""Small pure helpers for reading config text: parsers that report instead of raising, line numbers."""

from __future__ import annotations

import configparser
import json
import re
from types import ModuleType
from typing import Any


def line_at(text: str, offset: int) -> int:
    """The 1-based line of a character offset."""
    return text.count("\n", 0, max(offset, 0)) + 1


def line_of(text: str, pattern: str, *, after: int = 0) -> int | None:
    """The 1-based line of the first regex match at or after character `after`, or None."""
    match = re.compile(pattern, re.MULTILINE).search(text, after)
    return line_at(text, match.start()) if match else None


def one_line(exc: BaseException) -> str:
    """A parser's complaint on one short line (YAML and INI errors span several)."""
    return " ".join(str(exc).split())[:200]


def json_error(source: str, exc: Exception) -> str:
    """A one-line message for a JSON parse failure, naming the file and position."""
    if isinstance(exc, json.JSONDecodeError):
        return f"{source}: not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
    if isinstance(exc, RecursionError):
        return f"{source}: not valid JSON: nested too deeply"
    return f"{source}: not valid JSON: {exc}"


_JSONC_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def load_jsonc(text: str) -> Any:
    """Parse JSON with comments and trailing commas (tsconfig.json, pyrightconfig.json)."""
    stripped = _JSONC_TOKEN.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", text)
    return json.loads(_TRAILING_COMMA.sub(r"\1", stripped))


def _yaml() -> tuple[ModuleType, Any]:
    """PyYAML and its safe loader, imported on first use: most repositories have no YAML
    to read, and the import costs more than discovering their checks.

    The loader is libyaml's when PyYAML was built with it (ten times faster on a large
    file), with the same safe constructor either way: plain data, never objects."""
    import yaml

    return yaml, getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str, path: str) -> tuple[Any, str | None]:
    """(data, None), or (None, a message naming `path`) for text that is not YAML.

    Deep nesting raises RecursionError and some scalars ValueError, not YAMLError;
    all of them are the file's problem, so all of them become the message."""
    yaml, loader = _yaml()
    try:
        return yaml.load(text, Loader=loader), None
    except yaml.YAMLError as exc:
        return None, f"{path}: not valid YAML: {one_line(exc)}"
    except (RecursionError, ValueError) as exc:
        return None, f"{path}: not valid YAML: {type(exc).__name__}"


def load_yaml_documents(text: str, path: str) -> tuple[list[Any], str | None]:
    """Every document of a multi-document YAML file (`---` separated), or a message."""
    yaml, loader = _yaml()
    try:
        return list(yaml.load_all(text, Loader=loader)), None
    except yaml.YAMLError as exc:
        return [], f"{path}: not valid YAML: {one_line(exc)}"
    except (RecursionError, ValueError) as exc:
        return [], f"{path}: not valid YAML: {type(exc).__name__}"


def load_ini(text: str, path: str) -> tuple[configparser.ConfigParser, str | None]:
    """(parser, None), or (an empty parser, a message naming `path`) for text that is not INI."""
    # No interpolation: tox and setup.cfg values hold `%` meant for other tools.
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text, source=path)
    except (configparser.Error, ValueError) as exc:
        return configparser.ConfigParser(), f"{path}: not a valid INI file: {one_line(exc)}"
    return parser, None
