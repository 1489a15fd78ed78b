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
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from assay.evidence import TestCase
from assay.parsers._text import relative

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
_LEGENDS = frozenset(
    {
        "- Expected",
        "+ Received",
        "+ expected - actual",
        "- expected + actual",
        "+ actual - expected",
    }
)


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
    close = pad + "..."
    # tape indents the keys two more than the `---` (node and node-tap do not).
    first = next((line for line in lines[at:] if line.strip()), "")
    if first != close and first.startswith(pad):
        indent = len(first) - len(first.lstrip(" "))
        pad = " " * indent
    while at < len(lines) and lines[at] != close:
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


# --------------------------------------------------------------------------- node-tap, tape

#: A TAP result as node-tap (`ok 1 - name # time=2ms`) and tape (`not ok 3 should be equal`,
#: no dash) print it.
_TAP_RESULT = re.compile(r"^(?P<indent> *)(?P<not>not )?ok (?P<n>\d+)\b(?: -)?(?: (?P<rest>.*))?$")
_TAP_DIRECTIVE = re.compile(r"\s+#\s*(?P<directive>SKIP|TODO)\b.*$", re.IGNORECASE)
_TAP_TIME = re.compile(r"\s+# time=[\d.]+m?s\s*$")
#: A plan at the top level: `1..5`, `1..0 # no tests found`.
_TAP_PLAN = re.compile(r"^1\.\.(?P<n>\d+)\s*(?:#.*)?$")
_TAP_BAIL_OUT = re.compile(r"^Bail out!")
_TAP_VERSION = re.compile(r"^TAP version \d+\s*$")
#: node-tap's own per-test deadline: the test gets a failing `timeout!` result whose YAML
#: names what expired (`expired: test/index.js`); the hang says nothing about the code.
_NODE_TAP_TIMEOUT = "timeout!"


@dataclass(slots=True)
class TapRun:
    """A TAP stream read without its runner's closing counts: its top-level results by
    outcome, the plans it announced, and its failures named by where they are."""

    passed: int = 0
    failed: int = 0
    skipped: int = 0
    #: Top-level results that failed only for a test the runner stopped at its deadline.
    timed_out: int = 0
    planned: int = 0
    #: Plan lines at the top level (`1..0` too): a stream with none was cut short, or is
    #: not TAP.
    plans: int = 0
    #: `TAP version 13` or a top-level result: the stream is TAP.
    tap: bool = False
    bailed: bool = False
    failures: list[TestCase] = field(default_factory=list)
    hung: list[str] = field(default_factory=list)
    #: The `# Subtest:` the stream ended inside, by the subtests it is nested in: where a
    #: run stopped at a deadline was (node-tap prints a file's header as it starts it).
    unfinished: str | None = None

    #: The innermost tests by outcome: each subtest with no subtest in it, and each
    #: top-level result that is no subtest. node-tap wraps each test file in a subtest, so
    #: its top level counts files: fast-content-type-parse's 48 tests were "1 passed".
    leaves: Counter[str] = field(default_factory=Counter)

    @property
    def results(self) -> int:
        return self.passed + self.failed + self.skipped + self.timed_out

    @property
    def top_level(self) -> Counter[str]:
        """The top-level results by outcome, keyed as `leaves` is."""
        counts = (self.passed, self.failed, self.skipped, self.timed_out)
        return Counter(dict(zip(("passed", "failed", "skipped", "timed_out"), counts)))


def tap_run(text: str, cwd: str) -> TapRun:
    """node-tap's and tape's TAP. A failure is named by the subtests it is nested in
    (node-tap: `test/index.js > undefined`, after the `# Subtest:` headers), or, at the top
    level, by the heading before it (tape's `# name` of a test block), with the failed
    assertion's message; a subtest that failed for the failures nested in it is not one
    more. node-tap's `timeout!` is a hang: named in `hung`, and the top-level test it is in
    is not counted failed unless something else in it failed."""
    run = TapRun()
    lines = text.splitlines()
    # Each open `# Subtest:` by depth: its name, and how many failures and hangs were
    # known when it began.
    open_at: dict[int, tuple[str, int, int]] = {}
    #: The depths of open subtests that have a subtest in them: not innermost tests.
    parents: set[int] = set()
    heading: str | None = None
    at = 0
    while at < len(lines):
        line = lines[at]
        at += 1
        if subtest := _SUBTEST.match(line):
            depth = len(subtest["indent"]) // _TAP_INDENT
            open_at = {d: o for d, o in open_at.items() if d < depth}
            open_at[depth] = (subtest["name"], len(run.failures), len(run.hung))
            parents = {d for d in parents if d < depth} | set(open_at) - {depth}
            continue
        if plan := _TAP_PLAN.match(line):
            run.planned += int(plan["n"])
            run.plans += 1
            continue
        if _TAP_VERSION.match(line):
            run.tap = True
            continue
        if _TAP_BAIL_OUT.match(line):
            run.bailed = True
            continue
        result = _TAP_RESULT.match(line)
        if result is None:
            if line.startswith("# ") and not open_at:
                heading = line[2:].strip()
            continue
        fields, at = _yaml_block(lines, at, len(result["indent"]) + 2)
        depth = len(result["indent"]) // _TAP_INDENT
        rest = _TAP_TIME.sub("", result["rest"] or "")
        directive = _TAP_DIRECTIVE.search(rest)
        name = (rest[: directive.start()] if directive else rest).strip() or f"#{result['n']}"
        failed = result["not"] is not None and directive is None
        own = open_at.pop(depth, None)
        open_at = {d: o for d, o in open_at.items() if d < depth}
        enclosing = [open_at[d][0] for d in sorted(open_at)]
        new_failures = len(run.failures) - own[1] if own else 0
        new_hangs = len(run.hung) - own[2] if own else 0
        if failed and own is not None:
            if not new_failures and not new_hangs:
                # A subtest that failed with nothing failed in it: it failed itself.
                run.failures.append(_tap_case([*enclosing, name], None, fields, cwd))
        elif failed and name == _NODE_TAP_TIMEOUT and "expired" in fields:
            run.hung.append(" > ".join(enclosing) or fields["expired"])
        elif failed:
            run.failures.append(_tap_case(enclosing or [heading or name], name, fields, cwd))
        if (own is not None or depth == 0) and depth not in parents:
            run.leaves[_outcome(directive is not None, failed, own, new_failures, new_hangs)] += 1
        parents.discard(depth)
        if depth > 0:
            continue
        run.tap = True
        outcome = _outcome(directive is not None, failed, own, new_failures, new_hangs)
        setattr(run, outcome, getattr(run, outcome) + 1)
    del run.failures[MAX_FAILURES:]
    run.unfinished = " > ".join(open_at[d][0] for d in sorted(open_at)) or None
    return run


def _outcome(directive: bool, failed: bool, own: object, new_failures: int, new_hangs: int) -> str:
    """The `TapRun` count a result goes to: a subtest that failed only for a hang in it
    timed out."""
    if directive:
        return "skipped"
    if not failed:
        return "passed"
    return "timed_out" if own is not None and not new_failures and new_hangs else "failed"


def _tap_case(
    path: Sequence[str], assertion: str | None, fields: dict[str, str], cwd: str
) -> TestCase:
    """A failed test named by `path`, its message the failed assertion and what the YAML
    block says of it: what was wanted and found, and where."""
    lines = [assertion] if assertion else []
    if error := fields.get("error"):
        lines.append(error)
    wanted = fields.get("expected", fields.get("wanted"))
    found = fields.get("actual", fields.get("found"))
    if wanted and found:  # not a nested mapping, which is not read
        lines += [f"expected: {wanted}", f"actual: {found}"]
    frames = [fields.get("at", ""), *fields.get("stack", "").splitlines()]
    place = next((p for p in (own_place(f.strip(), cwd) for f in frames) if p), None)
    text = "\n".join(lines) + (f"\n    at {place}" if place else "")
    return TestCase(name=" > ".join(path), outcome="failed", message=message(text, cwd))


# --------------------------------------------------------------------------- printed reporters


def printed_failures(text: str, cwd: str) -> list[TestCase]:
    """Failing tests as mocha's, jest's, vitest's, uvu's or ava's default reporter lists them."""
    lines = text.splitlines()
    for reader in (_mocha, _jest, _vitest, _uvu, _ava):
        found = [
            TestCase(name=name, outcome="failed", message=message(body, cwd))
            for name, body in itertools.islice(reader(lines), MAX_FAILURES)
        ]
        if found:
            return found  # one runner printed this output
    return [
        TestCase(
            name=relative(path, cwd) or path,
            outcome="failed",
            file=relative(path, cwd),
            message=message(body, cwd),
        )
        for path, body in itertools.islice(_borp(lines), MAX_FAILURES)
    ]


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


#: jest's line for a test file with a failure (`FAIL test/a.spec.ts`), before its blocks.
_JEST_SUITE = re.compile(r"^\s*FAIL\s+(?P<file>\S+)")
#: jest's block for a test file that could not be run at all (its import or a transform
#: such as ts-jest's type check failed): it names no test, the file does.
_JEST_SUITE_FAILED = "Test suite failed to run"


def _jest(lines: Sequence[str]) -> Iterator[tuple[str, str]]:
    """`  ● suite › test`, then the message, a code excerpt and the stack. A file that
    failed to run is named by its path (`FAIL test/a.spec.ts`): tiny-invariant's three
    test files under a type error were each "Test suite failed to run"."""
    at = 0
    suite: str | None = None
    while at < len(lines):
        if lines[at].startswith(_JEST_RECAP):
            return  # the failures again, in short
        if found := _JEST_SUITE.match(lines[at]):
            suite = found["file"]
        header = _JEST_HEADER.match(lines[at])
        at += 1
        if header is None or header["name"] == "Console":
            continue
        name = header["name"]
        if name == _JEST_SUITE_FAILED and suite is not None:
            name = f"{suite}: {_JEST_SUITE_FAILED.lower()}"
        body = []
        while (
            at < len(lines) and not _JEST_HEADER.match(lines[at]) and not _JEST_END.match(lines[at])
        ):
            if found := _JEST_SUITE.match(lines[at]):
                suite = found["file"]
            body.append(lines[at])
            at += 1
        yield name, "\n".join(body)


_VITEST_SECTION = re.compile(r"Failed (?:Tests|Suites) \d+")
_VITEST_HEADER = re.compile(r"^\s*FAIL\s+(?P<name>\S.*?)\s*$")
_VITEST_RULE = re.compile(r"^\s*⎯")


def _vitest(lines: Sequence[str]) -> Iterator[tuple[str, str]]:
    """` FAIL  file > suite > test` blocks of the "Failed Tests" section, each closed by a
    rule of ⎯."""
    start = next((i for i, line in enumerate(lines) if _VITEST_SECTION.search(line)), None)
    if start is None:
        return
    for header, body in _blocks(lines[start + 1 :], _VITEST_HEADER, _VITEST_RULE):
        yield header["name"], body


def _blocks(
    lines: Sequence[str], header: re.Pattern[str], end: re.Pattern[str]
) -> Iterator[tuple[re.Match[str], str]]:
    """Each line `header` matches, with the lines after it up to the next such line or one
    `end` matches."""
    at = 0
    while at < len(lines):
        found = header.match(lines[at])
        at += 1
        if found is None:
            continue
        body = []
        while at < len(lines) and not header.match(lines[at]) and not end.match(lines[at]):
            body.append(lines[at])
            at += 1
        yield found, "\n".join(body)


#: uvu: `   FAIL  suite  "test"` (uvu 0.5, a test of the default suite: `   FAIL  "test"`),
#: then the assertion's message and stack, until the next suite's progress line
#: (` Date  • ✘   (1 / 2)`) or the closing `  Total:     137`.
_UVU_HEADER = re.compile(r'^\s+FAIL\s+(?:(?P<suite>[^\s"].*?)\s+)?"(?P<test>.*)"\s*$')
_UVU_END = re.compile(r"^ \S.*\(\d+ / \d+\)\s*$|^\s+Total:\s+\d+\s*$")


def _uvu(lines: Sequence[str]) -> Iterator[tuple[str, str]]:
    """Each `FAIL  suite  "test"` block, named `suite > test`."""
    for header, body in _blocks(lines, _UVU_HEADER, _UVU_END):
        suite = header["suite"]
        yield f"{suite} > {header['test']}" if suite else header["test"], body


#: ava's default reporter: `  ✘ [fail]: title` as each test ends (`file › title` where there
#: are several files; a message may follow the title), then, between two `  ─` rules, each
#: failure again: `  title` on a line of its own, its place (`test.js:66`), the source
#: around it, the difference, and `› file://test.js:66:4`.
_AVA_FAIL = re.compile(r"^\s*[✘✖×] \[fail\]: (?P<title>.+?)\s*$")
#: ava 3's reporter off a terminal: `  ✖ title` alone, the recap alike. Its word on the run
#: takes that form too (`✖ test.js exited with a non-zero exit code: 1`, `✖ Timed out while
#: running tests`), but only a test's title heads a block of the recap.
_AVA3_FAIL = re.compile(r"^  ✖ (?P<title>\S.*?)\s*$")
_AVA_RULE = re.compile(r"^\s*─\s*$")


def _ava(lines: Sequence[str]) -> Iterator[tuple[str, str]]:
    """Each `✘ [fail]: title`, with the block its recap after the `─` rule gives it; where
    there is none, each ava 3 `✖ title` that the recap names."""
    titles = list(dict.fromkeys(m["title"] for line in lines if (m := _AVA_FAIL.match(line))))
    ava3 = not titles
    if ava3:
        titles = list(dict.fromkeys(m["title"] for line in lines if (m := _AVA3_FAIL.match(line))))
    if not titles:
        return
    details: dict[str, list[str]] = {}
    rule = next((i for i, line in enumerate(lines) if _AVA_RULE.match(line)), None)
    if rule is not None:
        current: list[str] | None = None
        for line in lines[rule + 1 :]:
            if _AVA_RULE.match(line):
                break
            title = line.strip()
            # A recap's title is indented by two; its source lines and difference by more.
            heading = line.startswith("  ") and not line.startswith("   ")
            named = next(
                (t for t in titles if heading and (t == title or t.startswith(title + " "))), None
            )
            if named is not None and named not in details:
                current = details[named] = []
            elif current is not None:
                current.append(line)
    for title in titles:
        if not ava3 or title in details:
            yield title, "\n".join(_ava_said(details.get(title, ())))


_AVA_SOURCE = re.compile(r"^\s+\d+: |^\s*\S+:\d+\s*$")  # `   65:   t.is(...)`, `  test.js:66`
_AVA_AT = re.compile(r"^\s*› (?:file://)?(?P<place>\S+:\d+(?::\d+)?)\s*$")


def _ava_said(body: Sequence[str]) -> Iterator[str]:
    """A recap block as `message` reads one: the difference and error, not the source
    excerpt, and its `› file://test.js:66:4` as a stack frame."""
    for line in body:
        if (at := _AVA_AT.match(line)) is not None:
            yield f"    at {at['place']}"
        elif not _AVA_SOURCE.match(line):
            yield line


#: borp's line reporter (@jsumners/line-reporter): `failed: /x/test/a.test.js (2,160 ms)` per
#: test file, then under `Failed tests:` each file again, `\tline: 6, column: 1` and its
#: error indented by two tabs.
_BORP_FAILED = re.compile(r"^failed: (?P<path>\S.*?) \(\d[\d,]*(?:\.\d+)? m?s\)\s*$")
_BORP_RECAP = "Failed tests:"
_BORP_PLACE = re.compile(r"^\tline: (?P<line>\d+), column: (?P<col>\d+)\s*$")


def _borp(lines: Sequence[str]) -> Iterator[tuple[str, str]]:
    """Each failed test file and what the recap says of it: its error, then its place."""
    failed = list(dict.fromkeys(m["path"] for line in lines if (m := _BORP_FAILED.match(line))))
    if not failed:
        return
    said: dict[str, list[str]] = {}
    places: dict[str, str] = {}
    path: str | None = None
    recap = next((i for i, line in enumerate(lines) if line.strip() == _BORP_RECAP), len(lines))
    for line in lines[recap + 1 :]:
        if not line.startswith("\t"):
            if line.strip():
                path = line.strip() if line.strip() in failed else None
            continue
        if path is None:
            continue
        if place := _BORP_PLACE.match(line):
            places.setdefault(path, f"    at {path}:{place['line']}:{place['col']}")
        else:
            said.setdefault(path, []).append(line.strip())
    for path in failed:
        yield path, "\n".join([*said.get(path, []), places.get(path, "")])
