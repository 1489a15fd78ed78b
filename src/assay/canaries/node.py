"""Canaries for node's own test runner (`node --test`, or a package script that runs it).

`node --test` runs each test file in a process of its own, and code a test file requires
can end that process before any of its tests ran (`process.exit(0)`); node then reports
the file itself as one passing test. So the canaries are preloaded into every node process
of the run (`NODE_OPTIONS=--require ...`, which reaches through a package manager) and
registered only in the processes the runner starts for test files (node marks them with
`NODE_TEST_CONTEXT`), once each: every test file's process reports them before its own
tests, and a file reported under its own path never ran them. Processes a test starts in
turn inherit a mark that keeps the canaries out of them.

Each test file's process also reports to node through a channel it writes itself (a
serialized event per test on its stdout): code a test file requires can rewrite what goes
through it, turning one of the project's failures into a pass and sparing the canaries,
which it tells apart by the file they come from (a red team's: every `test:fail` of a test
under `test/` re-serialized as `test:pass`). So the module also records, after every test
of the file, whether node itself saw it pass, on the process's stderr, which node passes on
as it came (as `#` lines of its report, never through the code's stdout); a test it saw
fail that the report says passed was rewritten on its way, and a run whose must-fail
canary left no such record had the record kept from the report.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import textwrap
from collections import Counter
from collections.abc import Sequence

from assay.canaries import (
    Canary,
    CanaryFile,
    NoCanary,
    Planting,
    PlantRequest,
    all_checks,
    any_name,
    ignored_by_git,
)
from assay.canaries.js_runners import IMPORTED, assertion_checks, canary_tests, split_mark
from assay.parsed_output import ParsedOutput
from assay.process import ProcessResult
from assay.script_runner import ScriptRunner, script_runner

#: `node --test` flags that select tests by name: a canary would not be selected.
_SELECTING = ("--test-name-pattern", "--test-skip-pattern", "--test-only")
#: Extensions of the files `node --test` runs.
_TEST_FILE_SUFFIXES = (".js", ".cjs", ".mjs", ".ts", ".cts", ".mts")


def plant_node_test(request: PlantRequest) -> Planting | NoCanary:
    """`node --test [...]`, as the check runs it."""
    if "--test" not in request.check.argv:
        return NoCanary("the command is not `node --test`")
    return _plant(request, request.check.argv)


def plant_package_script(request: PlantRequest) -> Planting | NoCanary:
    """`npm test`, `yarn run test`...: canaries when the script runs `node --test`."""
    script = _script(request)
    if isinstance(script, NoCanary):
        return script
    words = _node_test_words(script)
    if words is None:
        return NoCanary(f"the script runs {script!r}: no canary for it through a package script")
    return _plant(request, words)


def _plant(request: PlantRequest, argv: Sequence[str]) -> Planting | NoCanary:
    if any(a == flag or a.startswith(flag + "=") for a in argv for flag in _SELECTING):
        return NoCanary("the run selects tests by name: a canary would not be selected")
    canaries = request.pair()
    stem = request.name()
    module = request.cwd / f".{stem}" / f"{stem}.cjs"
    path = request.relative(module)
    mark = request.token()
    return Planting(
        files=(
            CanaryFile(path, _module(canaries, request.name(), mark)),
            ignored_by_git(path.rsplit("/", 1)[0]),
        ),
        canaries=canaries,
        env={"NODE_OPTIONS": f"--require {_quoted(str(module))}"},
        repeats=None,
        checks=all_checks(
            _files_that_reported_nothing, functools.partial(_outcomes_rewritten, canaries, mark)
        ),
        what=f"a module {path} preloaded into every test process (NODE_OPTIONS=--require)",
        printed=functools.partial(_printed_without, canaries, mark),
    )


def _printed_without(canaries: Sequence[Canary], mark: str, text: str, ran: Counter[str]) -> str:
    """node's TAP `text` without the canaries' parts: each one's subtest, from its
    `# Subtest:` line to the next test's, their share (`ran`) of the plan and the
    closing counts (`# tests`, `# pass`, `# fail`), and the lines the module's record wrote."""
    text = re.sub(rf"^[^\n]*{re.escape(mark)}[^\n]*\n?", "", text, flags=re.MULTILINE)
    names = any_name(canaries)
    subtest = re.compile(
        rf"^(?P<indent> *)# Subtest: (?:{names})\n"
        rf"(?:(?!(?P=indent)# Subtest: |(?P=indent)1\.\.\d|# tests ).*\n)*",
        re.MULTILINE,
    )
    less = {"1..": ran.total(), "# tests ": ran.total()}
    less |= {"# pass ": ran["passed"], "# fail ": ran["failed"]}

    def counted(match: re.Match[str]) -> str:
        return f"{match[1]}{max(int(match[2]) - less[match[1]], 0)}"

    # The plan (`1..4`) and the counts of the top level only: a nested plan holds no canary.
    closing = re.compile(r"^(1\.\.|# tests |# pass |# fail )(\d+)$", re.MULTILINE)
    return closing.sub(counted, subtest.sub("", text))


#: The largest package.json read for its scripts.
PACKAGE_JSON_MAX_BYTES = 4 * 1024 * 1024
_SCRIPT_RUNNERS = ("run", "run-script")
_SHELL_OPERATORS = frozenset({"&&", "||", ";", "|", "&"})


def _script_runner(request: PlantRequest) -> ScriptRunner | NoCanary:
    """The runner the check's package script ends with (`assay.script_runner`), with the
    words the check gives it after npm's `--`."""
    script = _script(request)
    if isinstance(script, NoCanary):
        return script
    runner = script_runner(script)
    if runner is None:
        return NoCanary(
            f"the script runs {script!r}: it does not end with a jest or vitest command"
        )
    return runner.given(request.check.argv)


def script_words(request: PlantRequest, fixed: Sequence[str]) -> tuple[str, ...] | NoCanary:
    """The words of the runner the check's package script ends with, from its name on, as
    the planters of directly run runners read them; or why not, when the script gives
    itself one of the `fixed` flags, which the planted run must set and which words added
    after npm's `--` cannot take back."""
    runner = _script_runner(request)
    if isinstance(runner, NoCanary):
        return runner
    given = runner.sets(fixed)
    if given:
        return NoCanary(
            f"the script gives {runner.runner} {', '.join(given)} itself, which words added "
            "after npm's `--` cannot take back"
        )
    return (runner.runner, *runner.args)


def _script(request: PlantRequest) -> str | NoCanary:
    from assay.untrusted_files import read_untrusted

    rest = list(request.check.argv[1:])
    name = rest[1] if rest[:1] and rest[0] in _SCRIPT_RUNNERS and len(rest) > 1 else rest[0]
    rel = request.relative(request.cwd / "package.json")
    data = read_untrusted(request.root, rel, limit=PACKAGE_JSON_MAX_BYTES)
    try:
        scripts = json.loads(data)["scripts"] if isinstance(data, bytes) else None
    except (ValueError, KeyError, TypeError, RecursionError):
        scripts = None
    script = scripts.get(name) if isinstance(scripts, dict) else None
    if not isinstance(script, str):
        return NoCanary(f"package.json has no script {name!r} that could be read")
    return script


def _node_test_words(script: str) -> list[str] | None:
    """The words of the `node ... --test ...` command in `script`, if it runs one."""
    try:
        words = shlex.split(script)
    except ValueError:
        return None
    command: list[str] = []
    for word in [*words, ";"]:
        if word not in _SHELL_OPERATORS:
            command.append(word)
            continue
        if command and os.path.basename(command[0]) in ("node", "nodejs") and "--test" in command:
            return command
        command = []
    return None


def _quoted(path: str) -> str:
    # NODE_OPTIONS splits on spaces, and reads double quotes.
    return json.dumps(path) if " " in path else path


def _module(canaries: Sequence[Canary], mark: str, said: str) -> str:
    tests = textwrap.indent(canary_tests(canaries, assertion_checks(IMPORTED), "afterEach"), "  ")
    return (
        "/* eslint-disable */\n"
        "// @ts-nocheck\n"
        '"use strict";\n'
        "// Only in a process the test runner started for a test file, and not again in the\n"
        "// processes its tests start (they inherit the mark).\n"
        f"if (process.env.NODE_TEST_CONTEXT && !process.env.{mark}) {{\n"
        f'  process.env.{mark} = "1";\n'
        '  const { test, afterEach } = require("node:test");\n'
        "  // What node itself saw of each test, on stderr, as taken before any code of the\n"
        "  // project's loaded: the outcome it reports on stdout may be rewritten on its way.\n"
        '  const writeSync = require("fs").writeSync;\n'
        "  const quoted = JSON.stringify;\n"
        f"  const said = {split_mark(said)};\n"
        "  afterEach((t) => {\n"
        '    const seen = typeof t.passed !== "boolean" ? " blind" : t.passed ? "" : " failed ";\n'
        "    if (!seen) return;\n"
        '    const line = seen === " blind" ? seen : seen + quoted(String(t.name));\n'
        "    try {\n"
        '      writeSync(2, "\\n" + said + line + "\\n");\n'
        "    } catch {}\n"
        "  });\n"
        f"{tests}"
        "}\n"
    )


#: A line of the module's record: a test node saw fail (its name, as JSON), or that this
#: node cannot say (no `TestContext.passed` before 20.12).
_RECORD = re.compile(r" (?:failed (?P<name>\"(?:[^\"\\\\]|\\\\.)*\")|(?P<blind>blind))")


def _outcomes_rewritten(
    canaries: Sequence[Canary], mark: str, result: ProcessResult, parsed: ParsedOutput
) -> list[str]:
    """Why the outcomes node reported are not the ones its test processes saw: a test the
    module's record saw fail reported as passed, or a must-fail canary reported failing
    with no record of it (the record was kept from the report)."""
    if result.timed_out or result.signal is not None or not result.started:
        return []
    failed: Counter[str] = Counter()
    blind = False
    for stream in (result.stdout, result.stderr):
        for line in stream.text.splitlines():
            at = line.find(mark)
            if at < 0 or (record := _RECORD.match(line, at + len(mark))) is None:
                continue
            if record["blind"]:
                blind = True
                continue
            try:
                name = json.loads(record["name"])
            except ValueError:
                continue
            if isinstance(name, str):
                failed[name] += 1
    if blind and not failed:
        return []
    must_fail = [c.name for c in canaries if not c.must_pass]
    reported = Counter(c.name for c in parsed.test_cases if c.outcome == "failed")
    if any(reported[name] and not failed[name] for name in must_fail):
        why = (
            "the record of what node saw of each test, which its test processes write beside "
            "their report, did not reach the output with the tests planted to fail"
        )
        return [why]
    # By name where the report lists the test (its top level), and by number for the rest:
    # node's closing counts take in every test, nested ones too (not their suites).
    passed = {c.name for c in parsed.test_cases if c.outcome == "passed"}
    rewritten = sorted(n for n in failed if n in passed and not reported[n] and n not in must_fail)
    counts = parsed.tests
    unreported = (
        counts is not None and failed.total() > counts.failed + counts.errors + counts.skipped
    )
    if not rewritten and not unreported:
        return []
    if not rewritten:
        why = (
            f"its test processes saw {failed.total()} tests fail, the planted ones included, "
            f"but the report counts {counts.failed if counts else 0}: what they sent node was "
            "rewritten on its way"
        )
        return [why]
    more = f" (and {len(rewritten) - 1} more)" if len(rewritten) > 1 else ""
    why = (
        f"the test {rewritten[0]!r}{more} failed in its test process but was reported as "
        "passed: what the process sent node was rewritten on its way"
    )
    return [why]


def _files_that_reported_nothing(result: ProcessResult, parsed: ParsedOutput) -> list[str]:
    """node reports a test process that ended without reporting any test under its file's
    path: with the canaries in every process, one that ended "passing" never ran them."""
    silent = [
        case.name
        for case in parsed.test_cases
        if case.outcome == "passed"
        and os.path.isabs(case.name)
        and case.name.endswith(_TEST_FILE_SUFFIXES)
    ]
    if not silent:
        return []
    where = os.path.relpath(silent[0], result.cwd) if result.cwd else silent[0]
    more = f" (and {len(silent) - 1} more)" if len(silent) > 1 else ""
    return [f"the test file {where}{more} ended its process before the tests planted in it ran"]
