"""Poetry's dependency groups as pip requirements.

A Poetry project declares what its tests need in `[tool.poetry.group.<name>.dependencies]`
(`[tool.poetry.dev-dependencies]` before Poetry 1.2), a table of names and Poetry's own
constraints (`^6.0`, `~1.2`, `1.2.*`), which pip cannot read. iso8601 keeps hypothesis and
pytz there and nowhere else: without them its tests cannot even be collected.

Each entry becomes a PEP 508 requirement pip takes (`hypothesis>=6.0,<7.0`); one pip could
not install from an index (a `path`, `git` or `url` source) is left out, and a constraint
that cannot be translated (`^1.0 || ^2.0`) keeps only the name. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["poetry_groups", "poetry_requirement"]

#: The oldest Poetry's table for its only group, read as the group `dev`.
LEGACY_DEV_GROUP = "dev"

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_VERSION = re.compile(r"\d+(?:\.\d+)*")
_PLAIN = re.compile(r"\d+(?:\.\d+)*(?:[abc]|rc|\.post|\.dev)?\d*")
_OPERATORS = re.compile(r"(?:[<>]=?|==|!=|~=)\s*\S+(?:\s*,\s*(?:[<>]=?|==|!=|~=)\s*\S+)*")


def poetry_groups(pyproject: Mapping[str, Any]) -> dict[str, list[str]]:
    """Each Poetry group's requirements, by group name, in declaration order."""
    poetry = _table(_table(pyproject.get("tool")).get("poetry"))
    groups: dict[str, list[str]] = {}
    for name, group in _table(poetry.get("group")).items():
        if isinstance(name, str):
            groups[name] = _requirements(_table(_table(group).get("dependencies")))
    legacy = _requirements(_table(poetry.get("dev-dependencies")))
    if legacy:
        groups.setdefault(LEGACY_DEV_GROUP, []).extend(legacy)
    return groups


def poetry_requirement(name: str, spec: object) -> str | None:
    """`name` with Poetry's constraint `spec` (a string or a table) as pip reads it; None
    for an entry pip cannot install from an index, or a name that is not one."""
    if not _NAME.fullmatch(name) or name.lower() == "python":
        return None
    if isinstance(spec, dict):
        if any(key in spec for key in ("path", "git", "url", "file")):
            return None
        extras = [e for e in spec.get("extras") or () if isinstance(e, str) and _NAME.fullmatch(e)]
        markers = spec.get("markers")
        version = spec.get("version")
        spec = version if isinstance(version, str) else "*"
        head = f"{name}[{','.join(extras)}]" if extras else name
        tail = f"; {markers}" if isinstance(markers, str) and ";" not in markers else ""
        return f"{head}{_specifier(spec)}{tail}"
    if isinstance(spec, str):
        return f"{name}{_specifier(spec)}"
    return None


def _requirements(table: Mapping[str, Any]) -> list[str]:
    found = []
    for name, spec in table.items():
        requirement = poetry_requirement(name, spec) if isinstance(name, str) else None
        if requirement is not None:
            found.append(requirement)
    return found


def _specifier(constraint: str) -> str:
    """Poetry's `constraint` as a PEP 440 specifier ("" for any version, or for one that
    cannot be translated)."""
    text = constraint.strip()
    if text in ("", "*") or "||" in text or "|" in text:
        return ""
    if text.startswith("^") and _VERSION.fullmatch(text[1:].strip()):
        return _caret(text[1:].strip())
    if text.startswith("~") and not text.startswith("~=") and _VERSION.fullmatch(text[1:].strip()):
        return _tilde(text[1:].strip())
    if re.fullmatch(r"\d+(?:\.\d+)*\.\*", text):
        return f"=={text}"
    if _PLAIN.fullmatch(text):
        return f"=={text}"
    if _OPERATORS.fullmatch(text):
        return text.replace(" ", "")
    return ""


def _caret(version: str) -> str:
    """`^1.2.3`: up to the next change of the first non-zero part (`>=1.2.3,<2.0.0`)."""
    parts = [int(p) for p in version.split(".")]
    first = next((at for at, part in enumerate(parts) if part), len(parts) - 1)
    upper = [*parts[:first], parts[first] + 1]
    return f">={version},<{'.'.join(map(str, upper))}"


def _tilde(version: str) -> str:
    """`~1.2.3` and `~1.2`: up to the next minor (`<1.3`); `~1`: up to the next major."""
    parts = [int(p) for p in version.split(".")]
    kept = parts[:2] if len(parts) > 1 else parts[:1]
    upper = [*kept[:-1], kept[-1] + 1]
    return f">={version},<{'.'.join(map(str, upper))}"


def _table(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}
