"""Canaries for jest.

Where jest looks for tests (`roots`, `testMatch`, `projects`...) is decided by the project's
configuration, which is code, and is never evaluated here. So the run gets a configuration
of assay's (`--config`) that, inside the sandbox, reads the project's own with the very
reader of the running jest (its `readInitialOptions`: `--config` as the command gave it,
else what jest finds from the working directory) and changes it only to add a setup file of
assay's to `setupFilesAfterEnv`, to keep jest from collecting assay's own files as tests,
and to undo `bail` (the must-fail canary must not stop the run). The setup file registers
the two canaries in every test file, before the file's own tests: every test file the
report lists must list both, once each (a file whose tests a rewritten report lists
without them did not run them).

A run that selects tests by name (`-t`) or by project gets none: a canary would not be
selected.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from assay.canaries import (
    MUST_FAIL_MESSAGE,
    Canary,
    CanaryFile,
    Checks,
    NoCanary,
    Planting,
    PlantRequest,
    _name_pattern,
    failed_run,
    ignored_by_git,
)
from assay.parsed_output import ParsedOutput
from assay.process import ProcessResult

#: jest flags that select tests by name or by project: a canary would not be selected.
_SELECTING = ("-t", "--testNamePattern", "--projects", "--selectProjects", "--ignoreProjects")
#: jest flags that stop the run at a failure (the must-fail canary would stop it).
_BAIL = ("-b", "--bail")
_CONFIG = ("-c", "--config")


def plant_jest(request: PlantRequest) -> Planting | NoCanary:
    """`jest [...]`, as the check runs it."""
    argv = request.check.argv
    if any(_is(arg, flag) for arg in argv for flag in _SELECTING):
        return NoCanary("the run selects tests by name or project: a canary would not be selected")
    config = _config_argument(argv)
    if isinstance(config, NoCanary):
        return config
    token = request.token()
    canaries = (
        Canary(f"assay_canary_{request.token()}", must_pass=True),
        Canary(f"assay_canary_{request.token()}", must_pass=False),
    )
    directory = request.cwd / f".assay-canary-{token}"
    setup = directory / f"assay_canary_{token}.setup.cjs"
    wrapper = directory / f"assay_canary_{token}.config.cjs"
    wrapper_path = request.relative(wrapper)

    def edit(argv: tuple[str, ...]) -> tuple[str, ...]:
        return (*_without_config_and_bail(argv), "--config", str(wrapper))

    return Planting(
        files=(
            CanaryFile(request.relative(setup), _setup(canaries)),
            CanaryFile(wrapper_path, _wrapper(config, str(directory), str(setup))),
            ignored_by_git(request.relative(directory)),
        ),
        canaries=canaries,
        edit_argv=edit,
        repeats=None,
        failed_groups=_failed_beyond_tests,
        checks=_files_without_canaries(canaries),
        what=(
            f"a jest configuration {wrapper_path} that loads the project's own and adds "
            "a setup file registering 2 tests in every test file"
        ),
    )


#: What jest prints when the run's coverage is under a threshold (it then exits 1, the
#: exit code of failed tests, which the must-fail canary also gives).
_COVERAGE_FAILED = re.compile(
    r"Jest: (?:Coverage for .+ does not meet|Uncovered count for .+ exceeds"
    r"|Coverage data for .+ was not found)"
)


def _failed_beyond_tests(result: ProcessResult) -> frozenset[str] | None:
    if _COVERAGE_FAILED.search(result.stdout.text + result.stderr.text):
        return None  # a failure the canaries do not account for
    return failed_run(result)


def _is(arg: str, flag: str) -> bool:
    return arg == flag or arg.startswith(flag + "=")


def _config_argument(argv: Sequence[str]) -> str | None | NoCanary:
    """The `--config` the command gives jest (None: jest finds its own)."""
    for index, arg in enumerate(argv):
        for flag in _CONFIG:
            if arg == flag:
                if index + 1 >= len(argv):
                    return NoCanary(f"{flag} has no value")
                return argv[index + 1]
            if arg.startswith(flag + "="):
                return arg.split("=", 1)[1]
    return None


def _without_config_and_bail(argv: tuple[str, ...]) -> tuple[str, ...]:
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg in _CONFIG:
            skip = True
            continue
        if any(_is(arg, flag) for flag in (*_CONFIG, *_BAIL)):
            continue  # `--bail` takes no separate value: `--bail=N` or `--bail`
        kept.append(arg)
    return tuple(kept)


def _setup(canaries: Sequence[Canary]) -> str:
    tests = "".join(
        f"test({json.dumps(c.name)}, () => {{}});\n"
        if c.must_pass
        else f"test({json.dumps(c.name)}, () => {{\n"
        f"  throw new Error({json.dumps(MUST_FAIL_MESSAGE)});\n}});\n"
        for c in canaries
    )
    return (
        "/* eslint-disable */\n"
        "// @ts-nocheck\n"
        "// Canary tests of one verification run, written by assay and removed after it: one\n"
        "// of them must fail and one must pass, in every test file, or the run's report was\n"
        "// rewritten.\n"
        '"use strict";\n'
        "// Where the project turns jest's globals off (`injectGlobals: false`).\n"
        'const test = globalThis.test || require("@jest/globals").test;\n'
        f"{tests}"
    )


def _wrapper(config: str | None, directory: str, setup: str) -> str:
    ignored = "^" + re.escape(directory.rstrip("/") + "/")
    return (
        "/* eslint-disable */\n"
        "// @ts-nocheck\n"
        "// The project's jest configuration, read by the running jest itself, with the canary\n"
        "// tests of one verification run added to every test file (written by assay).\n"
        '"use strict";\n'
        "module.exports = async () => {\n"
        "  // The configuration reader of the jest that is loading this file.\n"
        "  const reader = Object.keys(require.cache).find((p) =>\n"
        "    /[\\\\/]jest-config[\\\\/]build[\\\\/]index\\.js$/.test(p),\n"
        "  );\n"
        "  const loaded = reader && require(reader);\n"
        '  if (!loaded || typeof loaded.readInitialOptions !== "function") {\n'
        "    throw new Error(\n"
        '      "assay canaries: this jest cannot read the project\'s configuration for them",\n'
        "    );\n"
        "  }\n"
        f"  const {{ config }} = await loaded.readInitialOptions({json.dumps(config)}, {{\n"
        "    packageRootOrConfig: process.cwd(),\n"
        "  });\n"
        "  if (Array.isArray(config.projects) && config.projects.length > 0) {\n"
        "    throw new Error(\n"
        '      "assay canaries: a configuration with `projects` cannot carry them",\n'
        "    );\n"
        "  }\n"
        "  return {\n"
        "    ...config,\n"
        f"    setupFilesAfterEnv: [...(config.setupFilesAfterEnv || []), {json.dumps(setup)}],\n"
        "    testPathIgnorePatterns: [\n"
        '      ...(config.testPathIgnorePatterns || ["/node_modules/"]),\n'
        f"      {json.dumps(ignored)},\n"
        "    ],\n"
        "    bail: 0,\n"
        "  };\n"
        "};\n"
    )


def _files_without_canaries(canaries: Sequence[Canary]) -> Checks:
    patterns = [_name_pattern(c.name) for c in canaries]

    def check(result: ProcessResult, parsed: ParsedOutput) -> list[str]:
        """Every test file the report lists ran the canaries, before its own tests."""
        files: dict[str, int] = {}
        for case in parsed.test_cases:
            if case.file is None:
                continue
            files.setdefault(case.file, 0)
            if any(p.search(case.name) for p in patterns):
                files[case.file] += 1
        silent = sorted(f for f, seen in files.items() if seen < len(patterns))
        if not silent:
            return []
        more = f" (and {len(silent) - 1} more)" if len(silent) > 1 else ""
        return [f"the test file {silent[0]}{more} lists tests but not the tests planted in it"]

    return check
