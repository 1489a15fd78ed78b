"""Failing node tests by name, with their message and the place in the project they failed.

Read from what the runners print: node --test's TAP (each failure's YAML block), and the
default reporters of mocha, jest and vitest that a package script (`npm test`) leaves in
place. Each message keeps the assertion's own lines and the first stack frame in the
project; the runner's frames (node_modules, node's internals) and code excerpts are left
out. Paths stay as printed: the report makes the workspace's path relative.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from assay.evidence import TestCase

#: Lines of a message kept before its place (the human report shows five in all).
MESSAGE_LINES = 4
#: Failing tests read from one output: enough to show, bounded for a runaway printer.
MAX_FAILURES = 500

#: A stack frame: `at fn (/x/a.js:3:9)`, `at /x/a.js:3:9`, vitest's `❯ a.js:3:9`.
_FRAME = re.compile(r"^\s*(?:at |❯ )")
_PLACE = re.compile(r"(?:file://)?(?P<path>[^\s()]+?):(?P<line>\d+):(?P<col>\d+)\)?\s*$")
#: Code excerpts the runners print under a failure: `> 3 |  expect(...)`, `  4| ...`, `   |  ^`.
_EXCERPT = re.compile(r"^\s*>?\s*\d*\s?\|")
#: Diff legends, which say nothing without the diff's full length.
_LEGENDS = frozenset({"- Expected", "+ Received", "+ expected - actual", "- expected + actual"})


def message(text: str, cwd: str) -> str | None:
    """A runner's failure text (jest and vitest JSON `failureMessages`, a printed block) as
    its first lines and the first frame in the project."""
    lines: list[str] = []
    place = None
    for line in text.splitlines():
        stripped = line.strip()
        if _FRAME.match(line):
            place = place or own_place(stripped, cwd)
            continue
        if place is None and stripped and stripped not in _LEGENDS and not _EXCERPT.match(line):
            lines.append(stripped)
    kept = lines[:MESSAGE_LINES] + ([f"at {place}"] if place else [])
    return "\n".join(kept) or None


def own_place(frame: str, cwd: str) -> str | None:
    """`path:line:col` of a stack frame in the project: not in node_modules or node's own
    modules, and, when absolute, inside the directory the check ran in."""
    match = _PLACE.search(frame)
    if match is None:
        return None
    path = match["path"]
    if "node_modules" in path.split("/") or path.startswith(("node:", "internal/")):
        return None
    if path.startswith("/") and not path.startswith(cwd.rstrip("/") + "/"):
        return None
    return f"{path}:{match['line']}:{match['col']}"


# --------------------------------------------------------------------------- node --test TAP

_SUBTEST = re.compile(r"^(?P<indent> *)# Subtest: (?P<name>.*)$")
_RESULT = re.compile(
    r"^(?P<indent> *)(?P<not>not )?ok \d+ - (?P<name>.*?)(?:\s+#\s*(?P<directive>SKIP|TODO)\b.*)?$"
)
_YAML_KEY = re.compile(r"^(?P<key>[A-Za-z_]\w*):(?: (?P<value>.*))?$")
_BLOCK_SCALAR = frozenset({"|", "|-", "|+", ">", ">-", ">+"})
#: node's TAP nests a subtest four spaces deeper than its parent.
_TAP_INDENT = 4


@dataclass(slots=True)
class _Failure:
    """One `not ok` of the TAP stream: its path of names and its YAML fields."""

    names: list[str]
    fields: dict[str, str]
    comments: list[str]


def tap_top_level(text: str, cwd: str) -> list[TestCase]:
    """node --test's top-level results in order; a failed one carries what failed in it: its
    own error, or each failing test nested in it (`suite > test: message`)."""
    lines = text.splitlines()
    cases: list[TestCase] = []
    names: list[str] = []
    nested: list[_Failure] = []
    comments: list[str] = []
    at = 0
    while at < len(lines):
        line = lines[at]
        at += 1
        if subtest := _SUBTEST.match(line):
            depth = len(subtest["indent"]) // _TAP_INDENT
            names[depth:] = [subtest["name"]]
            continue
        result = _RESULT.match(line)
        if result is None:
            if line.startswith("# ") and not _SUBTEST.match(line):
                comments.append(line[2:])
            continue
        fields, at = _yaml_block(lines, at, len(result["indent"]) + 2)
        depth = len(result["indent"]) // _TAP_INDENT
        failed = result["not"] is not None and not result["directive"]
        if depth > 0:
            if failed and fields.get("failureType") != "subtestsFailed":
                path = [*names[1:depth], result["name"]]
                nested.append(_Failure(path, fields, []))
            continue
        outcome = "skipped" if result["directive"] else "failed" if failed else "passed"
        text_of = None
        if failed:
            own = _Failure([result["name"]], fields, comments)
            text_of = _tap_message(own, nested, cwd)
        cases.append(TestCase(name=result["name"], outcome=outcome, message=text_of))
        names, nested, comments = [], [], []
    return cases


def _tap_message(own: _Failure, nested: Sequence[_Failure], cwd: str) -> str | None:
    if nested:
        parts = [
            _prefixed(" > ".join(f.names), _failure_text(f, cwd)) for f in nested[:MESSAGE_LINES]
        ]
        return "\n".join(p for p in parts if p) or None
    return _failure_text(own, cwd)


def _prefixed(name: str, text: str | None) -> str:
    first, _, rest = (text or "").partition("\n")
    return f"{name}: {first}" + (f"\n{rest}" if rest else "")


def _failure_text(failure: _Failure, cwd: str) -> str | None:
    """A failure's error and its place; a test file that failed as a whole ("test failed")
    is told by what it printed, such as the SyntaxError that stopped it."""
    fields = failure.fields
    error = fields.get("error", "")
    frames = [own_place(f, cwd) for f in fields.get("stack", "").splitlines()]
    if error.strip() == "test failed" and failure.comments:
        error = "\n".join(_printed_error(failure.comments))
        # node prints `/x/a.test.js:2` above the line a file could not be compiled at.
        frames = [_printed_place(c, cwd) for c in failure.comments] + frames
    place = next((p for p in frames if p), None) or own_place(fields.get("location", ""), cwd)
    return message(error + (f"\n    at {place}" if place else ""), cwd)


def _printed_error(comments: Sequence[str]) -> list[str]:
    """The lines from the first that names an error, else the first ones; never node's
    closing `Node.js vX` line."""
    shown = [c for c in comments if not _FRAME.match(c) and not _NODE_VERSION.match(c)]
    for index, line in enumerate(shown):
        if re.search(r"\b\w*Error\b", line):
            return shown[index:][:MESSAGE_LINES]
    return shown[:MESSAGE_LINES]


def _printed_place(line: str, cwd: str) -> str | None:
    match = _FILE_LINE.match(line.strip())
    return own_place(f"{match['path']}:{match['line']}:1", cwd) if match else None


_NODE_VERSION = re.compile(r"^Node\.js v\d")
_FILE_LINE = re.compile(r"^(?P<path>/\S+):(?P<line>\d+)$")


def _yaml_block(lines: Sequence[str], at: int, indent: int) -> tuple[dict[str, str], int]:
    """The YAML diagnostic block that may follow a TAP result at `indent` (`---` ... `...`),
    read for its top-level scalars; returns them and the index after the block."""
    pad = " " * indent
    if at >= len(lines) or lines[at] != pad + "---":
        return {}, at
    fields: dict[str, str] = {}
    at += 1
    while at < len(lines) and lines[at] != pad + "...":
        line = lines[at]
        if line.strip() and not line.startswith(pad):
            return fields, at  # never closed: what follows is not the block's
        at += 1
        if line[indent : indent + 1] == " " or not line.strip():
            continue  # a deeper line outside a block scalar: a nested mapping, not read
        match = _YAML_KEY.match(line[indent:])
        if match is None:
            continue
        value = (match["value"] or "").strip()
        if value in _BLOCK_SCALAR:
            body = []
            while at < len(lines) and (lines[at].startswith(pad + " ") or not lines[at].strip()):
                body.append(lines[at][indent + 2 :])
                at += 1
            value = "\n".join(body)
        fields[match["key"]] = _scalar(value)
    return fields, min(at + 1, len(lines))


def _scalar(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    if len(value) >= 2 and value[0] == value[-1] == '"':
        try:
            decoded = json.loads(value)
        except (ValueError, RecursionError):
            return value[1:-1]
        return decoded if isinstance(decoded, str) else value
    return value


# --------------------------------------------------------------------------- printed reporters


def printed_failures(text: str, cwd: str) -> list[TestCase]:
    """Failing tests as mocha's, jest's or vitest's default reporter lists them."""
    lines = text.splitlines()
    for reader in (_mocha, _jest, _vitest):
        found = [
            TestCase(name=name, outcome="failed", message=message(body, cwd))
            for name, body in itertools.islice(reader(lines), MAX_FAILURES)
        ]
        if found:
            return found  # one runner printed this output
    return []


_MOCHA_FAILING = re.compile(r"^\s*\d+ failing\b")
_MOCHA_HEADER = re.compile(r"^  (?P<n>\d+)\) (?P<title>.*)$")


def _mocha(lines: Sequence[str]) -> Iterator[tuple[str, str]]:
    """`  1) suite` / `       test:` / the error and its stack, after `N failing`."""
    start = next((i for i, line in enumerate(lines) if _MOCHA_FAILING.match(line)), None)
    if start is None:
        return
    at = start + 1
    while at < len(lines):
        header = _MOCHA_HEADER.match(lines[at])
        at += 1
        if header is None:
            continue
        title = [header["title"].strip()]
        while not title[-1].endswith(":") and at < len(lines) and lines[at].strip():
            title.append(lines[at].strip())
            at += 1
        body = []
        while at < len(lines) and not _MOCHA_HEADER.match(lines[at]):
            body.append(lines[at])
            at += 1
        yield " ".join(title).removesuffix(":").strip(), "\n".join(body)


_JEST_HEADER = re.compile(r"^\s*● (?P<name>\S.*?)\s*$")
_JEST_RECAP = "Summary of all failing tests"
_JEST_END = re.compile(rf"^(?:Test Suites:|Tests:|{_JEST_RECAP})")


def _jest(lines: Sequence[str]) -> Iterator[tuple[str, str]]:
    """`  ● suite › test`, then the message, a code excerpt and the stack."""
    at = 0
    while at < len(lines):
        if lines[at].startswith(_JEST_RECAP):
            return  # the failures again, in short
        header = _JEST_HEADER.match(lines[at])
        at += 1
        if header is None or header["name"] == "Console":
            continue
        body = []
        while (
            at < len(lines) and not _JEST_HEADER.match(lines[at]) and not _JEST_END.match(lines[at])
        ):
            body.append(lines[at])
            at += 1
        yield header["name"], "\n".join(body)


_VITEST_SECTION = re.compile(r"Failed (?:Tests|Suites) \d+")
_VITEST_HEADER = re.compile(r"^\s*FAIL\s+(?P<name>\S.*?)\s*$")
_VITEST_RULE = re.compile(r"^\s*⎯")


def _vitest(lines: Sequence[str]) -> Iterator[tuple[str, str]]:
    """` FAIL  file > suite > test` blocks of the "Failed Tests" section, each closed by a
    rule of ⎯."""
    start = next((i for i, line in enumerate(lines) if _VITEST_SECTION.search(line)), None)
    if start is None:
        return
    at = start + 1
    while at < len(lines):
        header = _VITEST_HEADER.match(lines[at])
        at += 1
        if header is None:
            continue
        body = []
        while (
            at < len(lines)
            and not _VITEST_HEADER.match(lines[at])
            and not _VITEST_RULE.match(lines[at])
        ):
            body.append(lines[at])
            at += 1
        yield header["name"], "\n".join(body)
