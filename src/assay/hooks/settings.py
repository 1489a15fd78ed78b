"""Claude Code's settings file: assay's hooks added or removed, nothing else touched.

The hook is one entry in `hooks.Stop[*].hooks`, and with `--protect` one more in
`hooks.UserPromptSubmit[*].hooks` (where the base is recorded), each recognised by its
command (`... assay hook claude-code ...`). Installing twice leaves one entry per event;
uninstalling removes only those entries (and a group or list they leave empty). A file
that is not the JSON object Claude Code reads is an error and is left exactly as it was.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from assay.errors import AssayError

__all__ = [
    "DEFAULT_COMMAND",
    "HOOK_TIMEOUT_S",
    "SettingsError",
    "install",
    "settings_path",
    "uninstall",
]

DEFAULT_COMMAND = "assay hook claude-code"
#: Seconds Claude Code gives the hook; verification's own budget is below it
#: (`assay.hooks.decide.DEFAULT_DEADLINE_S`), so the hook answers before it is killed.
HOOK_TIMEOUT_S = 600
#: With `--protect`, the event at which the base is recorded, and the time it is given
#: (above `assay.hooks.prompt_base.SNAPSHOT_TIMEOUT_S`).
PROMPT_EVENT = "UserPromptSubmit"
PROMPT_TIMEOUT_S = 90
#: The events assay's entries may be under: the stop, and the prompt.
EVENTS = ("Stop", PROMPT_EVENT)
#: An entry this module wrote: its command runs `assay hook claude-code`.
_OURS = re.compile(r"(^|[\s/\"'])assay(\.exe)?[\"']?\s+hook\s+claude-code(\s|$)")


class SettingsError(AssayError):
    """The settings file could not be read, understood or written; it was left as it was."""


def settings_path(scope: str, *, project: Path | None = None, home: Path | None = None) -> Path:
    """`.claude/settings.json` of the project (the working directory) or of the user."""
    if scope == "user":
        return (home or Path.home()) / ".claude" / "settings.json"
    return (project or Path.cwd()) / ".claude" / "settings.json"


def is_ours(entry: object) -> bool:
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("command"), str)
        and _OURS.search(entry["command"]) is not None
    )


def install(path: Path, command: str = DEFAULT_COMMAND, *, protect: bool = False) -> bool:
    """Add the hook running `command` to `path`: at Stop, and with `protect` at
    UserPromptSubmit too (`--protect` added to the command, and removed from neither
    event without it); False when it was already there as is."""
    if not _OURS.search(command):
        raise SettingsError(f"the command must run `assay hook claude-code`, got {command!r}")
    if "--protect" in command.split():
        protect = True  # a stop judged so needs the prompt's base recorded
    elif protect:
        command = f"{command} --protect"
    settings = _read(path)
    changed = False
    for event in EVENTS:
        wanted = event == "Stop" or protect
        timeout = PROMPT_TIMEOUT_S if event == PROMPT_EVENT else HOOK_TIMEOUT_S
        entry = {"type": "command", "command": command, "timeout": timeout} if wanted else None
        changed |= _put(settings, path, event, entry)
    if changed:
        _write(path, settings)
    return changed


def uninstall(path: Path) -> bool:
    """Remove assay's hooks from `path`; False when there were none (file untouched)."""
    if not path.exists():
        return False
    settings = _read(path)
    changed = False
    for event in EVENTS:
        changed |= _put(settings, path, event, None)
    if changed:
        _write(path, settings)
    return changed


def _put(settings: dict[str, Any], path: Path, event: str, wanted: dict[str, Any] | None) -> bool:
    """Make `wanted` (None: nothing) assay's one entry of `event`; whether that changed it."""
    groups = _event_groups(settings, path, event, create=wanted is not None)
    if groups is None:
        return False
    found = [
        (group, entry)
        for group in groups
        for entry in _entries(group, path, event)
        if is_ours(entry)
    ]
    if wanted is not None and len(found) == 1 and found[0][1] == wanted:
        return False
    if wanted is None and not found:
        return False
    for group, entry in found:  # an older or duplicated entry of ours: replaced by one
        group["hooks"].remove(entry)
    groups[:] = [g for g in groups if not _emptied(g, found)]
    if wanted is not None:
        groups.append({"hooks": [wanted]})
    if not groups:
        del settings["hooks"][event]
        if not settings["hooks"]:
            del settings["hooks"]
    return True


def _emptied(group: dict[str, Any], found: list[tuple[dict[str, Any], Any]]) -> bool:
    """`group` held an entry of ours and holds nothing now."""
    return any(g is group for g, _ in found) and not group["hooks"]


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(
            f"could not read {path}: {getattr(exc, 'strerror', None) or exc}"
        ) from None
    if not text.strip():
        return {}
    try:
        settings = json.loads(text)
    except ValueError as exc:
        raise SettingsError(
            f"{path} is not valid JSON ({exc}); fix it first, it was left as it is"
        ) from None
    if not isinstance(settings, dict):
        raise SettingsError(f"{path} is not a JSON object; it was left as it is")
    return settings


def _event_groups(
    settings: dict[str, Any], path: Path, event: str, *, create: bool
) -> list[Any] | None:
    hooks = settings.get("hooks")
    if hooks is None:
        if not create:
            return None
        hooks = settings["hooks"] = {}
    if not isinstance(hooks, dict):
        raise SettingsError(f"{path}: `hooks` is not an object; it was left as it is")
    groups = hooks.get(event)
    if groups is None:
        if not create:
            return None
        groups = hooks[event] = []
    if not isinstance(groups, list):
        raise SettingsError(f"{path}: `hooks.{event}` is not a list; it was left as it is")
    return groups


def _entries(group: object, path: Path, event: str) -> list[Any]:
    if not isinstance(group, dict) or not isinstance(group.get("hooks", []), list):
        raise SettingsError(
            f"{path}: an entry of `hooks.{event}` is not a hook group; it was left as it is"
        )
    return list(group.get("hooks", []))


def _write(path: Path, settings: dict[str, Any]) -> None:
    target = path.resolve()  # a linked settings file is updated where it lives
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=".settings-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(settings, out, indent=2, ensure_ascii=False)
                out.write("\n")
            # mkstemp makes it 0600; keep the mode a settings file already had.
            mode = target.stat().st_mode & 0o7777 if target.exists() else 0o644
            os.chmod(temporary, mode)
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise SettingsError(f"could not write {target}: {exc.strerror or exc}") from None
