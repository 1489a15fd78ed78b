"""Canaries for vitest.

Where vitest looks for tests is decided by the project's configuration (`vitest.config.*`,
else `vite.config.*`), which is code, and is never evaluated here. So the run gets a
configuration of assay's (`--config`) that, inside the sandbox, loads the project's own
with the loader of the running vitest (vite's `loadConfigFromFile`, found beside the
vitest that `process.argv` names) and changes it only to add a setup file of assay's to
`test.setupFiles`, to keep vitest from collecting assay's own files as tests (vitest's
default exclusions kept), and to undo `bail` (the must-fail canary must not stop the run);
a configuration with `projects` has each project resolved as vitest resolves it and given
the same (`vitest_projects`). vitest collects the tests a setup file registers as tests
of each test file, before the file's own: every test file the report lists must list both
canaries, once each.

A run that selects tests by name (`-t`) or by project gets none: a canary would not be
selected.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from assay.canaries import (
    Canary,
    CanaryFile,
    NoCanary,
    Planting,
    PlantRequest,
    failed_unless,
    ignored_by_git,
)
from assay.canaries.js_runners import (
    IMPORTED,
    assertion_checks,
    canary_tests,
    files_without_canaries,
    flag_value,
    is_flag,
    too_old,
    without_flags,
)
from assay.canaries.node import script_words
from assay.canaries.self_judging import vitest_guard
from assay.canaries.vitest_projects import PROJECTS

#: vitest flags that select tests by name or by project: a canary would not be selected.
_SELECTING = ("-t", "--testNamePattern", "--project")
#: vitest flags that stop the run at a failure; `--bail` takes a value.
_BAIL = ("--bail",)
_CONFIG = ("-c", "--config")
_ROOT = ("-r", "--root")
#: How vite loads a configuration file: the default bundles it into a file written beside
#: it, which the canaries' directory does not allow; assay's is plain ESM, loaded natively.
_LOADER = ("--configLoader",)


def plant_vitest(request: PlantRequest) -> Planting | NoCanary:
    """`vitest run [...]`, as the check runs it."""
    return _plant(request, request.check.argv, appended=False)


def plant_vitest_script(request: PlantRequest) -> Planting | NoCanary:
    """`npm run SCRIPT`, the script ending with a vitest command (`tools.node.NPM_VITEST`):
    the planted configuration is given after npm's `--`, where nothing can be taken away."""
    words = script_words(request, (*_CONFIG, *_BAIL, *_LOADER))
    return words if isinstance(words, NoCanary) else _plant(request, words, appended=True)


def _plant(request: PlantRequest, argv: Sequence[str], *, appended: bool) -> Planting | NoCanary:
    """Canaries for the vitest run `argv`; `appended`: its words can only be added to."""
    old = too_old(request, "vitest", _FIRST_NATIVE_LOADER, "`--configLoader native`")
    if old is not None:
        return old
    if any(is_flag(arg, flag) for arg in argv for flag in _SELECTING):
        return NoCanary("the run selects tests by name or project: a canary would not be selected")
    if "--no-config" in argv:
        return NoCanary("the run has no configuration for the canaries to be added to")
    config = flag_value(argv, _CONFIG)
    root = flag_value(argv, _ROOT)
    loader = flag_value(argv, _LOADER)
    if isinstance(config, NoCanary):
        return config
    if isinstance(root, NoCanary):
        return root
    if isinstance(loader, NoCanary):
        return loader
    canaries = request.pair()
    stem = request.name()
    directory = request.cwd / f".{stem}"
    setup = directory / f"{stem}.setup.mjs"
    wrapper = directory / f"{stem}.config.mjs"
    wrapper_path = request.relative(wrapper)

    def edit(argv: tuple[str, ...]) -> tuple[str, ...]:
        kept = argv if appended else without_flags(argv, (*_CONFIG, *_BAIL, *_LOADER))
        return (*kept, "--config", str(wrapper), "--configLoader", "native")

    return Planting(
        files=(
            CanaryFile(request.relative(setup), _setup(canaries, stem)),
            CanaryFile(wrapper_path, _wrapper(config, root, loader, directory.name, str(setup))),
            ignored_by_git(request.relative(directory)),
        ),
        canaries=canaries,
        edit_argv=edit,
        repeats=None,
        failed_groups=failed_unless(_COVERAGE_FAILED),
        checks=files_without_canaries(canaries),
        what=(
            f"a vitest configuration {wrapper_path} that loads the project's own and adds "
            "a setup file registering 2 tests in every test file"
        ),
    )


#: What vitest prints when the run's coverage is under a threshold (it then exits 1, the
#: exit code of failed tests, which the must-fail canary also gives).
_COVERAGE_FAILED = re.compile(
    r"ERROR: (?:Coverage for \S+ \(.+\) does not meet|Uncovered \S+ \(.+\) exceed)"
)


#: The first vitest that loads a configuration natively (`--configLoader native`), as the
#: planted one must be: an earlier one refuses the option.
_FIRST_NATIVE_LOADER = (3, 0)


def _setup(canaries: Sequence[Canary], mark: str) -> str:
    return (
        "/* eslint-disable */\n"
        "// @ts-nocheck\n"
        "// vitest's globals when the project turns them on, else its module.\n"
        'const { test, afterEach } = globalThis.test ? globalThis : await import("vitest");\n'
        f"{vitest_guard(mark)}"
        f"{_OUTCOME_HELD}"
        f"{canary_tests(canaries, assertion_checks(*_CHECKED, 'guarded'), 'afterEach')}"
    )


#: vitest keeps a test's outcome on its task (`task.result.state`), which every hook is
#: handed (`context.task`). A red team's: an `afterEach` registered by code a test file
#: imports set the result of each failed test whose name its test file spells out back to
#: `pass` (the canaries, whose names it does not hold, untouched), and vitest reported the
#: run passed in every channel. vitest itself never turns a failed try into a pass, except
#: for a test marked to fail (`test.fails`, once its tries are over). So before each test
#: the task's `result`, its result's `state` and its `fails` are held: a failure stays a
#: failure however the code sets them, and a result it puts in place of the held one is
#: refused when it would pass a failed test.
_OUTCOME_HELD = """\
{
  const hooks = globalThis.beforeEach ? globalThis : await import("vitest");
  const held = new WeakSet();
  const define = Object.defineProperty;
  const holdState = (result, fails) => {
    if (!result || typeof result !== "object" || held.has(result)) return;
    held.add(result);
    let state = result.state;
    define(result, "state", {
      enumerable: true,
      configurable: false,
      get: () => state,
      set: (next) => {
        if (state === "fail" && next === "pass" && !fails) return;
        state = next;
      },
    });
  };
  hooks.beforeEach((context) => {
    const task = context && context.task;
    if (!task || typeof task !== "object" || held.has(task)) return;
    held.add(task);
    const fails = !!task.fails;
    let result = task.result;
    holdState(result, fails);
    define(task, "fails", { enumerable: true, configurable: false, get: () => fails, set() {} });
    define(task, "result", {
      enumerable: true,
      configurable: false,
      get: () => result,
      set: (next) => {
        const failed = result && result.state === "fail";
        if (failed && next && typeof next === "object" && next.state === "pass") return;
        result = next;
        holdState(result, fails);
      },
    });
  });
}
"""


#: vitest's own `expect`; modules imported as the tests import them.
_CHECKED = (IMPORTED, '(await import("vitest")).expect')


def _wrapper(
    config: str | None, root: str | None, loader: str | None, directory: str, setup: str
) -> str:
    return (
        "/* eslint-disable */\n"
        "// @ts-nocheck\n"
        "// The project's vitest configuration, loaded by the running vitest's own loader, with\n"
        "// two tests added to every test file for this run.\n"
        'import { existsSync, readFileSync, readdirSync, realpathSync, statSync } from "node:fs";\n'
        'import { createRequire } from "node:module";\n'
        'import { basename, dirname, relative, resolve } from "node:path";\n'
        'import { pathToFileURL } from "node:url";\n'
        "\n"
        "// The vitest that is loading this file (its command is process.argv[1]), else the\n"
        "// project's.\n"
        "function find(name, from) {\n"
        "  for (const base of from) {\n"
        "    try {\n"
        "      return createRequire(base).resolve(name);\n"
        "    } catch {}\n"
        "  }\n"
        "  throw new Error(`planted tests: ${name} cannot be found to read the configuration`);\n"
        "}\n"
        "const launcher = process.argv[1] && existsSync(process.argv[1])\n"
        "  ? [realpathSync(process.argv[1])]\n"
        "  : [];\n"
        'const vitestConfig = find("vitest/config", [...launcher, resolve("package.json")]);\n'
        'const vitePath = find("vite", [vitestConfig]);\n'
        "const { configDefaults } = await import(pathToFileURL(vitestConfig).href);\n"
        "const { loadConfigFromFile } = await import(pathToFileURL(vitePath).href);\n"
        "\n"
        "// Where vitest looks: `--config` from the root, else vitest.config.* then\n"
        "// vite.config.* in the root and up from it.\n"
        f"const root = resolve({json.dumps(root or '.')});\n"
        f"const given = {json.dumps(config)};\n"
        'const names = ["vitest.config", "vite.config"].flatMap((name) =>\n'
        '  [".ts", ".mts", ".cts", ".js", ".mjs", ".cjs"].map((ext) => name + ext),\n'
        ");\n"
        "function lookUp(directory) {\n"
        "  for (;;) {\n"
        "    const found = names.map((n) => resolve(directory, n)).find((p) => existsSync(p));\n"
        "    if (found || dirname(directory) === directory) return found;\n"
        "    directory = dirname(directory);\n"
        "  }\n"
        "}\n"
        "const projectFile = given ? resolve(root, given) : lookUp(root);\n"
        f"const cliRoot = {json.dumps(root)};\n"
        f"const setup = {json.dumps(setup)};\n"
        f"const excluded = {json.dumps('**/' + directory + '/**')};\n"
        f"const mark = {json.dumps(directory)};\n"
        "const load = (env, file) =>\n"
        f"  loadConfigFromFile(env, file, root, undefined, undefined, {json.dumps(loader or 'bundle')});\n"
        f"{PROJECTS}"
        "\n"
        "export default async (env) => {\n"
        "  const loaded = projectFile ? await load(env, projectFile) : null;\n"
        "  const config = (loaded && loaded.config) || {};\n"
        "  const test = config.test || {};\n"
        "  const withProjects = await carried(config, env);\n"
        "  if (withProjects) return withProjects;\n"
        "  const setupFiles = [test.setupFiles || []].flat();\n"
        "  return {\n"
        "    ...config,\n"
        "    test: {\n"
        "      ...test,\n"
        "      setupFiles: [...setupFiles, setup],\n"
        "      exclude: [...(test.exclude || configDefaults.exclude), excluded],\n"
        "      bail: 0,\n"
        "    },\n"
        "  };\n"
        "};\n"
    )
