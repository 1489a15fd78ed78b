"""SWE-bench instances, read from a JSONL file and checked field by field.

The published datasets hold `FAIL_TO_PASS` and `PASS_TO_PASS` as JSON-encoded lists
(strings); some exports hold plain lists. Both are read. Every problem is reported with
its line, and the whole file is read before anything is made from it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.errors import AssayError

#: A task id is a folder name: the task schema's pattern.
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_REPO = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*")
_COMMIT = re.compile(r"[0-9a-fA-F]{7,64}")
#: The instances file is a dataset, not a repository: large, but still bounded.
MAX_FILE_BYTES = 2 * 1024 * 1024 * 1024
REQUIRED_TEXT = ("instance_id", "repo", "base_commit", "patch", "test_patch", "problem_statement")


class ImportFailed(AssayError):
    """Instances that cannot be made into tasks; the message names the line and why."""


@dataclass(frozen=True, slots=True)
class Instance:
    """One SWE-bench instance, as its line gave it (`raw` keeps every field)."""

    line: int
    instance_id: str
    repo: str
    base_commit: str
    patch: str
    test_patch: str
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    problem_statement: str
    raw: dict[str, Any]


def read_instances(path: Path) -> list[Instance]:
    """Every instance of the JSONL file at `path`; raises `ImportFailed` naming the line."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise ImportFailed(f"{path}: larger than {MAX_FILE_BYTES} bytes")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ImportFailed(f"{path}: could not be read ({exc})") from None
    found: list[Instance] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        instance = _instance(path, number, line)
        if instance.instance_id in seen:
            raise ImportFailed(
                f"{path}: line {number}: instance {instance.instance_id} is also on "
                f"line {seen[instance.instance_id]}"
            )
        seen[instance.instance_id] = number
        found.append(instance)
    if not found:
        raise ImportFailed(f"{path}: no instances in it")
    return found


def _instance(path: Path, number: int, line: str) -> Instance:
    where = f"{path}: line {number}"
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ImportFailed(f"{where}: not JSON ({exc.msg})") from None
    if not isinstance(record, dict):
        raise ImportFailed(f"{where}: not a JSON object")
    for key in REQUIRED_TEXT:
        if not isinstance(record.get(key), str) or not record[key].strip():
            raise ImportFailed(f"{where}: {key} is missing or not a non-empty string")
    if not _ID.fullmatch(record["instance_id"]):
        raise ImportFailed(
            f"{where}: instance_id {record['instance_id'][:80]!r} cannot name a task folder "
            "(letters, digits, '.', '_', '-'; up to 128)"
        )
    if not _REPO.fullmatch(record["repo"]):
        raise ImportFailed(f"{where}: repo: {record['repo'][:80]!r} is not owner/name")
    if not _COMMIT.fullmatch(record["base_commit"]):
        raise ImportFailed(
            f"{where}: base_commit {record['base_commit'][:80]!r} is not a commit id"
        )
    return Instance(
        line=number,
        instance_id=record["instance_id"],
        repo=record["repo"],
        base_commit=record["base_commit"],
        patch=record["patch"],
        test_patch=record["test_patch"],
        fail_to_pass=_tests(record, "FAIL_TO_PASS", where),
        pass_to_pass=_tests(record, "PASS_TO_PASS", where),
        problem_statement=record["problem_statement"],
        raw=record,
    )


def _tests(record: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = record.get(key, [])
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise ImportFailed(f"{where}: {key}: not a JSON list ({value[:60]!r})") from None
    if not isinstance(value, list) or not all(isinstance(t, str) and t for t in value):
        raise ImportFailed(f"{where}: {key}: expected a list of non-empty strings (test ids)")
    return tuple(value)
