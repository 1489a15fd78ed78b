"""Canaries for jest.

Where jest looks for tests (`roots`, `testMatch`, `projects`...) is decided by the project's
configuration, which is code, and is never evaluated here. So the run gets a configuration
of assay's (`--config`) that, inside the sandbox, reads the project's own with the very
reader of the running jest (its `readInitialOptions`: `--config` as the command gave it,
else what jest finds from the working directory) and changes it only to add a setup file of
assay's to `setupFilesAfterEnv`, to keep jest from collecting assay's own files as tests,
and to undo `bail` (the must-fail canary must not stop the run); a configuration with
`projects` has each project read the same way and given the same. The setup file registers
the two canaries in every test file, before the file's own tests: every test file the
report lists must list both, once each (a file whose tests a rewritten report lists
without them did not run them).

A run that selects tests by name (`-t`) or by project gets none: a canary would not be
selected.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from collections.abc import Sequence

from assay.canaries import (
    Canary,
    CanaryFile,
    Checks,
    NoCanary,
    Planting,
    PlantRequest,
    all_checks,
    any_name,
    failed_unless,
    ignored_by_git,
)
from assay.canaries.js_runners import (
    assertion_checks,
    canary_tests,
    files_without_canaries,
    flag_value,
    is_flag,
    split_mark,
    too_old,
    without_flags,
)
from assay.canaries.node import script_words
from assay.canaries.self_judging import jest_guard
from assay.parsed_output import ParsedOutput
from assay.process import ProcessResult

#: jest flags that select tests by name or by project: a canary would not be selected.
_SELECTING = ("-t", "--testNamePattern", "--projects", "--selectProjects", "--ignoreProjects")
#: jest flags that stop the run at a failure (the must-fail canary would stop it).
_BAIL = ("-b", "--bail")
_CONFIG = ("-c", "--config")
#: The first jest whose configuration reader the planted configuration can call
#: (`readInitialOptions`, jest-config 29.2.0); an earlier one would fail the run.
_FIRST_READER = (29, 2)


def plant_jest(request: PlantRequest) -> Planting | NoCanary:
    """`jest [...]`, as the check runs it."""
    return _plant(request, request.check.argv, appended=False)


def plant_jest_script(request: PlantRequest) -> Planting | NoCanary:
    """`npm run SCRIPT`, the script ending with a jest command (`tools.node.NPM_JEST`):
    the planted configuration is given after npm's `--`, where nothing can be taken away."""
    words = script_words(request, (*_CONFIG, *_BAIL))
    return words if isinstance(words, NoCanary) else _plant(request, words, appended=True)


def _plant(request: PlantRequest, argv: Sequence[str], *, appended: bool) -> Planting | NoCanary:
    """Canaries for the jest run `argv`; `appended`: its words can only be added to."""
    old = too_old(request, "jest", _FIRST_READER, "jest-config's `readInitialOptions`")
    if old is not None:
        return old
    if any(is_flag(arg, flag) for arg in argv for flag in _SELECTING):
        return NoCanary("the run selects tests by name or project: a canary would not be selected")
    config = flag_value(argv, _CONFIG)
    if isinstance(config, NoCanary):
        return config
    canaries = request.pair()
    stem = request.name()
    directory = request.cwd / f".{stem}"
    setup = directory / f"{stem}.setup.cjs"
    wrapper = directory / f"{stem}.config.cjs"
    reporter = directory / f"{request.name()}.cjs"
    wrapper_path = request.relative(wrapper)
    mark = request.token()

    def edit(argv: tuple[str, ...]) -> tuple[str, ...]:
        # jest's `--bail` takes no separate value: `--bail=N` or `--bail`.
        kept = argv if appended else without_flags(argv, _CONFIG, _BAIL)
        # Reporters named on the command line replace the configuration's: ours is added
        # to them there.
        named = any(is_flag(arg, "--reporters") for arg in kept)
        ours = (f"--reporters={reporter}",) if named else ()
        return (*kept, *ours, "--config", str(wrapper))

    return Planting(
        files=(
            CanaryFile(request.relative(setup), _setup(canaries, stem)),
            CanaryFile(wrapper_path, _wrapper(config, str(directory), str(setup), str(reporter))),
            CanaryFile(request.relative(reporter), _tallying_reporter(mark)),
            ignored_by_git(request.relative(directory)),
        ),
        canaries=canaries,
        edit_argv=edit,
        repeats=None,
        failed_groups=failed_unless(_FAILED_OTHERWISE),
        checks=all_checks(files_without_canaries(canaries), _untallied(mark)),
        mark=mark,
        what=(
            f"a jest configuration {wrapper_path} that loads the project's own and adds "
            "a setup file registering 2 tests in every test file"
        ),
        printed=functools.partial(_printed_without, canaries),
    )


def _printed_without(canaries: Sequence[Canary], text: str, ran: Counter[str]) -> str:
    """jest's printed `text` without the canaries' parts: their lines in a file's
    listing, the must-fail canary's failure sections, and their share (`ran`) of
    `Tests:`."""
    names = any_name(canaries)
    listed = re.compile(rf"^ +[✓✕] (?:{names})(?: \(\d+ m?s\))?\n", re.MULTILINE)
    section = re.compile(rf"^  ● (?:{names})\n(?:(?!  ● )(?: .*)?\n)*", re.MULTILINE)
    text = section.sub("", listed.sub("", text))
    less = {**ran, "total": ran.total()}

    def counted(match: re.Match[str]) -> str:
        parts = []
        for part in match[2].split(", "):
            number, _, word = part.partition(" ")
            left = int(number) - less.get(word, 0) if number.isdigit() else None
            if left is None or left > 0:
                parts.append(part if left is None else f"{left} {word}")
        return match[1] + ", ".join(parts)

    return re.sub(r"^(Tests: +)(.*)$", counted, text, flags=re.MULTILINE)


#: What jest prints when the run failed other than by a test (it then exits 1, the exit
#: code of failed tests, which the must-fail canary also gives): coverage under a
#: threshold, a test file that failed outside its tests (a hook after all of them threw),
#: which its report does not list as a test.
_FAILED_OTHERWISE = re.compile(
    r"Jest: (?:Coverage for .+ does not meet|Uncovered count for .+ exceeds"
    r"|Coverage data for .+ was not found)|Test suite failed to run"
)


def _setup(canaries: Sequence[Canary], mark: str) -> str:
    return (
        "/* eslint-disable */\n"
        "// @ts-nocheck\n"
        '"use strict";\n'
        "// Where the project turns jest's globals off (`injectGlobals: false`).\n"
        'const { test, afterEach } = globalThis.test ? globalThis : require("@jest/globals");\n'
        f"{jest_guard(mark)}"
        f"{_ERRORS_HELD}"
        f"{canary_tests(canaries, assertion_checks(*_CHECKED, 'guarded'), 'afterEach')}"
    )


#: jest-circus keeps each test's failures in an `errors` array on the test's entry in its
#: state, which it leaves on the test file's global (under a symbol that code under test
#: finds among the global's own). A red team's: code a test called redefined the running
#: test's `errors` as a getter of a fresh empty array, so that the failure was pushed into
#: nothing and jest itself reported the test passed, in every channel, the canaries
#: untouched. So each test's array is held from before it runs: the entry must still have
#: it as a plain value when the test ends, and an array no shorter when the file's tests are
#: done; else the file fails outside its tests (circus's `unhandledErrors`, which jest
#: reports as the file failing to run).
_ERRORS_HELD = """\
{
  // By test: a test retried (`jest.retryTimes`) is held again, its errors emptied by circus.
  const held = new Map();
  const key = Object.getOwnPropertySymbols(globalThis).find(
    (s) => s.description === "JEST_STATE_SYMBOL",
  );
  const circus = key === undefined ? undefined : globalThis[key];
  const hooks = globalThis.beforeEach ? globalThis : require("@jest/globals");
  const described = Object.getOwnPropertyDescriptor;
  // Once a test is done, circus maps its errors into a new array (formatNodeAssertErrors):
  // the same array is asked for until then, a plain value as long as it was after.
  const kept = (entry, seen) => {
    const now = described(entry, "errors");
    return !!now && "value" in now && Array.isArray(now.value) && now.value.length >= seen;
  };
  const refuse = (count) => {
    circus.unhandledErrors.push(
      new Error(
        `the failures of ${count} test(s) of this file were taken from jest's record of ` +
          "them while it ran (their errors redefined or emptied): the file cannot be believed",
      ),
    );
  };
  if (circus && Array.isArray(circus.unhandledErrors)) {
    hooks.beforeEach(() => {
      const entry = circus.currentlyRunningTest;
      if (entry && Array.isArray(entry.errors)) held.set(entry, { errors: entry.errors, seen: 0 });
    });
    hooks.afterEach(() => {
      const entry = circus.currentlyRunningTest;
      const last = entry && held.get(entry);
      if (!last) return;
      last.ended = kept(entry, 0) && entry.errors === last.errors;
      last.seen = last.errors.length;
    });
    hooks.afterAll(() => {
      let taken = 0;
      for (const [entry, h] of held) if (h.ended === false || !kept(entry, h.seen)) taken += 1;
      if (taken) refuse(taken);
    });
  }
}
"""


#: jest's own `expect` (a project may turn the globals off, or bind another library's
#: `expect` to the global); modules through jest's own `require`, as the tests get them.
_CHECKED = (
    "async (name) => require(name)",
    'require("@jest/globals").expect',
)


#: The reporter planted beside the tests: in jest's own process, as the run completes, it
#: counts the failing tests of the results jest's JSON report is then made from, and writes
#: the count after the run's mark straight to the standard error jest was started with (the
#: descriptor, not `process.stderr`, whose `write` the code under test can replace). The
#: report read later must list at least as many: one rewritten after jest wrote it (by a
#: process the code under test left running, or another check of the run), its printed
#: summary mended to agree, is found. Its functions are taken as it loads, before any test.
_TALLYING_REPORTER = """\
/* eslint-disable */
// @ts-nocheck
"use strict";
const writeSync = require("fs").writeSync;
const mark = $mark;
class Tally {
  onRunComplete(contexts, results) {
    let failing = 0;
    for (const file of (results && results.testResults) || []) {
      for (const test of file.testResults || []) {
        if (test.status === "failed") failing += 1;
      }
    }
    try {
      writeSync(2, "\\n" + mark + " tally " + failing + "\\n");
    } catch (e) {}
  }
}
module.exports = Tally;
"""


def _tallying_reporter(mark: str) -> str:
    return _TALLYING_REPORTER.replace("$mark", split_mark(mark))


#: What the reporter writes after the run's mark: how many tests failed.
_TALLY = re.compile(r" tally (?P<failing>\d+)\s*$")


def _untallied(mark: str) -> Checks:
    """The check that the report lists at least as many failing tests as the reporter
    planted beside the tests counted as jest completed the run."""

    def check(result: ProcessResult, parsed: ParsedOutput) -> list[str]:
        if result.exit_code is None or result.timed_out or not parsed.test_cases:
            return []  # stopped, or no report: no verdict is drawn from it
        tallies = [
            int(found["failing"])
            for line in result.stderr.text.splitlines()
            if line.startswith(mark) and (found := _TALLY.match(line[len(mark) :]))
        ]
        if not tallies:
            return ["jest's outcomes were not counted by the reporter planted beside the tests"]
        listed = sum(case.outcome in ("failed", "error") for case in parsed.test_cases)
        if listed < max(tallies):
            why = f"jest's report lists {listed} failing test(s) where the reporter planted"
            return [f"{why} beside the tests counted {max(tallies)}"]
        return []

    return check


#: The configuration the run is given: the project's own, read by the running jest itself,
#: with assay's setup file, ignore pattern and reporter added. A configuration with
#: `projects` takes its tests from each project's configuration, not its own: each project
#: (an object, or a directory or file its globs name, as jest expands them) is read the
#: same way and given the setup file and the pattern as an object of the same options.
_WRAPPER = """\
/* eslint-disable */
// @ts-nocheck
// The project's jest configuration, read by the running jest itself, with two
// tests added to every test file for this run.
"use strict";
const path = require("path");
const fs = require("fs");
const setup = $setup;
const ignored = $ignored;
const ours = (c) => ({
  ...c,
  setupFilesAfterEnv: [...(c.setupFilesAfterEnv || []), setup],
  testPathIgnorePatterns: [...(c.testPathIgnorePatterns || ["/node_modules/"]), ignored],
});
// jest's own expansion of `projects` (jest-config's normalize and readConfigs).
const readProjects = async (loaded, reader, config, parent) => {
  const glob = require(require.resolve("glob", { paths: [path.dirname(reader)] }));
  const sync = glob.sync || (glob.glob && glob.glob.sync) || glob.globSync;
  const read = [];
  for (const entry of config.projects) {
    if (typeof entry !== "string") {
      const rootDir = entry.rootDir ? loaded.replaceRootDirInPath(parent, entry.rootDir) : parent;
      read.push({ ...entry, rootDir });
      continue;
    }
    const named = loaded.replaceRootDirInPath(config.rootDir, entry);
    const found = sync(named, { windowsPathsNoEscape: true });
    for (const root of found.length > 0 ? found : [named]) {
      const at = path.resolve(root);
      if (fs.existsSync(at) && !fs.lstatSync(at).isDirectory() && !/\\.([cm]?[jt]s|json)$/.test(at)) {
        continue; // a globbed file that is no configuration: jest ignores it too
      }
      const options = await loaded.readInitialOptions(undefined, {
        packageRootOrConfig: at,
        skipMultipleConfigError: true,
      });
      read.push(options.config);
    }
  }
  return read;
};
module.exports = async () => {
  // The configuration reader of the jest that is loading this file.
  const reader = Object.keys(require.cache).find((p) =>
    /[\\\\/]jest-config[\\\\/]build[\\\\/]index\\.js$/.test(p),
  );
  const loaded = reader && require(reader);
  if (!loaded || typeof loaded.readInitialOptions !== "function") {
    throw new Error(
      "planted tests: this jest cannot read the project's configuration for them",
    );
  }
  const { config, configPath } = await loaded.readInitialOptions($config, {
    packageRootOrConfig: process.cwd(),
  });
  const parent = configPath ? path.dirname(configPath) : process.cwd();
  const many = Array.isArray(config.projects) && config.projects.length > 0;
  const projects = many ? (await readProjects(loaded, reader, config, parent)).map(ours) : [];
  return {
    ...ours(config),
    ...(many ? { projects } : {}),
    bail: 0,
    reporters: [...(config.reporters || ["default"]), $reporter],
  };
};
"""


def _wrapper(config: str | None, directory: str, setup: str, reporter: str) -> str:
    ignored = "^" + re.escape(directory.rstrip("/") + "/")
    values = {"$config": config, "$setup": setup, "$ignored": ignored, "$reporter": reporter}
    text = _WRAPPER
    for name, value in values.items():
        text = text.replace(name, json.dumps(value))
    return text
