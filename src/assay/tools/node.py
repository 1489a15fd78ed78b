"""JavaScript and TypeScript tools: node, node --test, package scripts, tsc, eslint, jest, vitest."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from assay.evidence import Check
from assay.tools import DEPENDENCY_DIR
from assay.tools.index import PACKAGE_MANAGER_HOMES
from assay.tools.instrumented import Instrumented, Request, Rule
from assay.tools.python import drop_lint_fixes
from assay.tools.spec import (
    ASKS_THE_TOOL,
    SCRIPT_KINDS,
    Command,
    Ecosystem,
    EcosystemSpec,
    Launch,
    Launcher,
    Match,
    RootConfig,
    TamperMarkers,
    ToolSpec,
    install_step,
)
from assay.verdict import Kind

_LOCAL = ("node_modules/.bin",)
_NODE_HINT = "install Node.js (Debian: `apt-get install nodejs`)"

PACKAGE_MANAGERS = ("npm", "pnpm", "yarn", "bun")
#: Package manager subcommands that are not scripts (`npm ci`, `yarn add`).
PM_BUILTINS = frozenset(
    {
        "install",
        "i",
        "ci",
        "add",
        "remove",
        "exec",
        "dlx",
        "create",
        "init",
        "publish",
        "link",
        "outdated",
        "audit",
        "config",
        "version",
        "cache",
        "why",
        "list",
        "ls",
        "pack",
        "rebuild",
    }
)
#: Lockfile -> the package manager's reproducible install command.
NODE_INSTALLS = (
    ("pnpm-lock.yaml", ("pnpm", "install", "--frozen-lockfile")),
    ("yarn.lock", ("yarn", "install", "--frozen-lockfile")),
    # bun before npm, as the scripts' runner is chosen (`discovery.toolenv.LOCKFILES`).
    ("bun.lockb", ("bun", "install", "--frozen-lockfile")),
    ("bun.lock", ("bun", "install", "--frozen-lockfile")),
    ("package-lock.json", ("npm", "ci")),
)


# --------------------------------------------------------------------------- tuning


def _tune_tsc(argv: list[str], fail_fast: bool) -> list[str]:
    if not {"--noEmit", "-b", "--build"} & set(argv):
        argv = [*argv, "--noEmit"]
    return argv


def _tune_vitest(argv: list[str], fail_fast: bool) -> list[str]:
    if "run" not in argv:
        argv = [argv[0], "run", *argv[1:]]  # without `run`, vitest watches in a terminal
    return argv


# --------------------------------------------------------------------------- instrumenting


def _eslint(request: Request) -> Instrumented:
    argv = request.argv
    if not request.has("-f", "--format"):
        argv = (*argv, "-f", "json")
    return request.runs(argv)


def _tsc(request: Request) -> Instrumented:
    argv = request.argv
    # One line per diagnostic, no colour: the form the text parser reads.
    if not request.has("--pretty"):
        argv = (*argv, "--pretty", "false")
    return request.runs(argv)


# Each with a reporter of assay's that records each test as it starts: a run stopped at
# the deadline writes no report, and names its hung test by that record.


def _jest_report(argv: tuple[str, ...], report: Path) -> tuple[str, ...]:
    from assay.js_test_starts import jest_reporter_words

    return ("--json", f"--outputFile={report}", *jest_reporter_words(argv, report))


def _vitest_report(argv: tuple[str, ...], report: Path) -> tuple[str, ...]:
    from assay.js_test_starts import vitest_reporter_words

    return ("--reporter=json", f"--outputFile={report}", *vitest_reporter_words(report))


#: The words that ask a runner, run as the argv given, for its JSON report at the path given.
_Asking = Callable[[tuple[str, ...], Path], tuple[str, ...]]


def _reporting(ask: _Asking) -> Rule:
    """The runner run directly, asked for its JSON report by the words `ask` gives."""

    def rule(request: Request) -> Instrumented:
        report = request.report("json")
        return request.runs((*request.argv, *ask(request.argv, report)), report, _record(report))

    return rule


def _npm_script_reporting(ask: _Asking) -> Rule:
    """`npm run SCRIPT` whose script ends with the runner, asked for its JSON report by
    the words `ask` gives, after npm's `--` (`assay.script_runner`)."""

    def rule(request: Request) -> Instrumented:
        report = request.report("json")
        argv = request.argv
        words = ask(argv, report)
        return request.runs(
            (*argv, *(() if "--" in argv else ("--",)), *words), report, _record(report)
        )

    return rule


def _record(report: Path) -> Path:
    """What a reporter of assay's may record beside `report`: stale before any run."""
    from assay.js_test_starts import record_path

    return record_path(report)


def _node_test(request: Request) -> Instrumented:
    argv = request.argv
    # Node picks the spec reporter on a terminal and TAP otherwise; ask for TAP explicitly.
    if not request.has("--test-reporter"):
        argv = (argv[0], "--test-reporter=tap", *argv[1:])
    return request.runs(argv)


# --------------------------------------------------------------------------- recognising


def _tsc_checks(rest: list[str]) -> Match | None:
    # Watching, writing a tsconfig, or saying its version or its configuration: no check.
    if any(a in ("-w", "--watch", "--init", "-v", "--version", "--showConfig") for a in rest):
        return None
    return Match(Kind.TYPECHECK, tuple(rest))


def _jest_runs(rest: list[str]) -> Match | None:
    return None if "--watch" in rest else Match(Kind.TEST, tuple(rest))


def _vitest_runs(rest: list[str]) -> Match | None:
    if rest[:1] in (["watch"], ["dev"]):
        return None
    return Match(Kind.TEST, tuple(rest))


#: prettier's options that only say whether files are formatted; without one it rewrites.
_PRETTIER_CHECKS = frozenset({"--check", "-c", "--list-different", "-l"})


def _prettier_checks(rest: list[str]) -> Match | None:
    if "--write" in rest or "-w" in rest or not _PRETTIER_CHECKS & set(rest):
        return None
    return Match(Kind.LINT, tuple(rest))


#: Biome's subcommands that check, and the options that make them write fixes instead.
_BIOME_CHECKS = frozenset({"check", "lint", "ci", "format"})
_BIOME_WRITES = frozenset({"--write", "--apply", "--apply-unsafe", "--fix", "--unsafe"})


def _biome_checks(rest: list[str]) -> Match | None:
    if rest[:1] and rest[0] in _BIOME_CHECKS and not _BIOME_WRITES & set(rest):
        return Match(Kind.LINT, tuple(rest))
    return None


def _node_test_runs(rest: list[str]) -> Match | None:
    return Match(Kind.TEST, tuple(rest)) if "--test" in rest else None


def script_called(rest: list[str]) -> str | None:
    """The package script `npm run X`, `yarn X` or `pnpm X` runs (`rest`: the words after
    the package manager), not a package manager builtin; None for any other command."""
    if not rest:
        return None
    script = rest[1] if rest[0] in ("run", "run-script") and len(rest) > 1 else rest[0]
    if script in PM_BUILTINS or script.startswith("-"):
        return None
    return script


def _package_script(rest: list[str]) -> Match | None:
    """`npm run lint`, `yarn test`: a check script, not a package manager builtin."""
    script = script_called(rest)
    if script is None:
        return None
    after = rest[rest.index(script) + 1 :]
    if after and set(after) <= ASKS_THE_TOOL:
        return None  # `yarn tsc --version` (redux-thunk's CI) checks nothing
    kind = SCRIPT_KINDS.get(script)
    if kind is None and script.startswith("test"):
        kind = Kind.TEST
    if kind is None:
        return None
    return Match(kind, tuple(rest))


# --------------------------------------------------------------------------- declarations


def _node_tool(name: str, hint: str, **more: object) -> ToolSpec:
    return ToolSpec(
        name=name,
        ecosystem=Ecosystem.NODE,
        binaries=(name,),
        install_hint=hint,
        local_dirs=_LOCAL,
        launch=Launch.NODE_BIN,
        **more,  # type: ignore[arg-type]
    )


NODE = ToolSpec(
    name="node", ecosystem=Ecosystem.NODE, binaries=("node", "nodejs"), install_hint=_NODE_HINT
)
NODE_TEST = ToolSpec(  # `node --test`: the same binary, parsed as TAP / spec reporter output
    name="node-test",
    ecosystem=Ecosystem.NODE,
    binaries=("node", "nodejs"),
    install_hint="install Node.js >= 18 (Debian: `apt-get install nodejs`)",
    commands=(Command(("node",), match=_node_test_runs),),
    instrument=_node_test,
    parser=("node", "parse_node_test"),
    canary=("node", "plant_node_test"),
    # The files `node --test` finds by itself, beside `*.test.*` (the ecosystem's test files).
    config_files=("**/*-test.*", "**/*_test.*", "**/test-*.*", "**/test.*", "**/test/**"),
)


def _dependency_env(deps: Path) -> dict[str, str]:
    """npm's cache (pnpm's store is given on its command line: `PNPM_STORE`); and yarn 2's
    global folder, which the sandbox shows read-only from the host's home (reselect's
    install could not copy an archive into its mirror: EROFS), as it would bun's cache.
    Plug'n'Play reads its packages from that folder's cache by a path relative to the
    project, which stays inside the workspace."""
    return {
        "npm_config_cache": str(deps / "npm"),
        "YARN_GLOBAL_FOLDER": str(deps / "yarn-berry"),
        "BUN_INSTALL_CACHE_DIR": str(deps / "bun"),
    }


# `npm test` runs whatever the package says: a node --test summary if there is one,
# else the common "N passed, M failed" counts (the node parser falls back to those).
NPM = ToolSpec(
    name="npm",
    ecosystem=Ecosystem.NODE,
    binaries=("npm",),
    install_hint="install npm (Debian: `apt-get install npm`)",
    local_dirs=_LOCAL,
    parser=("node", "parse_node_test"),
    dependency_env=_dependency_env,
)
NPM_TEST = ToolSpec(  # a package.json script run by whichever package manager the project uses
    name="npm-test",
    ecosystem=Ecosystem.NODE,
    binaries=PACKAGE_MANAGERS,
    install_hint="install the project's package manager (npm, pnpm, yarn or bun)",
    local_dirs=_LOCAL,
    commands=(Command(PACKAGE_MANAGERS, match=_package_script),),
    parser=("node", "parse_node_test"),
    canary=("node", "plant_package_script"),
    wrapper=True,
    # The package managers' own settings: `script-shell` and `yarnPath` choose what runs a script.
    config_files=(
        "**/.npmrc",
        "**/.yarnrc",
        "**/.yarnrc.yml",
        "**/bunfig.toml",
        ".yarn/releases/**",
    ),
)
#: A test script that ends with a jest (vitest) command, run by npm: asked for its runner's
#: JSON report, and planted with its runner's canaries, by words after npm's `--`
#: (`assay.script_runner`); planned so by `assay.plan` from what package.json says.
NPM_JEST = ToolSpec(
    name="npm-jest",
    ecosystem=Ecosystem.NODE,
    binaries=("npm",),
    install_hint=NPM.install_hint,
    local_dirs=_LOCAL,
    instrument=_npm_script_reporting(_jest_report),
    parser=("node", "parse_script_runner"),
    canary=("jest", "plant_jest_script"),
    wrapper=True,
    dependency_env=_dependency_env,
)
NPM_VITEST = replace(
    NPM_JEST,
    name="npm-vitest",
    instrument=_npm_script_reporting(_vitest_report),
    canary=("vitest", "plant_vitest_script"),
)
TSC = _node_tool(
    "tsc",
    "install TypeScript (`npm i -g typescript` or `npm i -D typescript`)",
    commands=(Command(("tsc", "vue-tsc"), match=_tsc_checks),),
    tune=_tune_tsc,
    instrument=_tsc,
    parser=("node", "parse_tsc"),
    # What it checks and how strictly (`strict`, `include`, `skipLibCheck`).
    config_files=("**/tsconfig*.json", "**/jsconfig*.json"),
)
ESLINT = _node_tool(
    "eslint",
    "install ESLint (`npm i -g eslint` or `npm i -D eslint`)",
    commands=(Command(("eslint",), Kind.LINT),),
    tune=drop_lint_fixes,
    instrument=_eslint,
    parser=("node", "parse_eslint"),
    root_config=RootConfig(
        (
            "eslint.config.js",
            "eslint.config.mjs",
            "eslint.config.cjs",
            "eslint.config.ts",
            ".eslintrc.js",
            ".eslintrc.cjs",
            ".eslintrc.json",
            ".eslintrc.yml",
            ".eslintrc.yaml",
            ".eslintrc",
        ),
        Kind.LINT,
        (".",),
    ),
    config_files=("**/eslint.config.*", "**/.eslintrc*", "**/.eslintignore"),
)
PRETTIER = _node_tool(  # a lint only with --check: a failing check fails the lint
    "prettier",
    "install Prettier (`npm i -D prettier`)",
    commands=(Command(("prettier",), match=_prettier_checks),),
    # What prettier leaves out or how it formats: the project's, read from the tree.
    config_files=("**/.prettierrc*", "**/prettier.config.*", "**/.prettierignore"),
)
BIOME = _node_tool(  # lint and format in one; `--write` makes it a fixer, not a check
    "biome",
    "install Biome (`npm i -D @biomejs/biome`)",
    commands=(Command(("biome",), match=_biome_checks),),
    parser=("node", "parse_biome"),
    config_files=("**/biome.json", "**/biome.jsonc"),
)
OXLINT = _node_tool(
    "oxlint",
    "install oxlint (`npm i -D oxlint`)",
    commands=(Command(("oxlint",), Kind.LINT),),
    tune=drop_lint_fixes,
    config_files=("**/.oxlintrc.json", "**/oxlintrc.json"),
)
VITEST = _node_tool(
    "vitest",
    "install Vitest (`npm i -D vitest`)",
    commands=(Command(("vitest",), match=_vitest_runs),),
    tune=_tune_vitest,
    instrument=_reporting(_vitest_report),
    parser=("node", "parse_jest"),
    canary=("vitest", "plant_vitest"),
    root_config=RootConfig(
        ("vitest.config.ts", "vitest.config.js", "vitest.config.mts", "vitest.config.mjs"),
        Kind.TEST,
        ("run",),
    ),
    # Vitest reads vite.config.* when it has no config of its own.
    config_files=(
        "**/vitest.config.*",
        "**/vitest.workspace.*",
        "**/vitest.setup.*",
        "**/vite.config.*",
    ),
)
JEST = _node_tool(
    "jest",
    "install Jest (`npm i -D jest`)",
    commands=(Command(("jest",), match=_jest_runs),),
    instrument=_reporting(_jest_report),
    parser=("node", "parse_jest"),
    canary=("jest", "plant_jest"),
    root_config=RootConfig(
        (
            "jest.config.js",
            "jest.config.ts",
            "jest.config.mjs",
            "jest.config.cjs",
            "jest.config.json",
        ),
        Kind.TEST,
        ("--ci",),
    ),
    # Jest transforms test files through the project's Babel configuration (its code).
    config_files=(
        "**/jest.config.*",
        "**/jest.setup.*",
        "**/babel.config.*",
        "**/.babelrc",
        "**/.babelrc.*",
    ),
)


def install_steps(root: Path) -> list[Check]:
    """The package manager's install, from its lockfile when there is one."""
    if not (root / "package.json").is_file() or (root / "node_modules").is_dir():
        return []
    for lockfile, pinned in NODE_INSTALLS:
        if (root / lockfile).is_file():
            why = f"{lockfile} pins the dependencies"
            if lockfile == "yarn.lock" and _yarn_classic(root):
                pinned = (*pinned, *YARN_CLASSIC_CACHE)
            return [install_step("node", _with_store(pinned), lockfile, why)]
    from assay.package_managers import wanted

    # The manager `packageManager` names, which runs the scripts too; npm without one.
    manager = getattr(wanted(root), "manager", "npm")
    argv = _with_store((manager, "install"))
    return [install_step("node", argv, "package.json", UNLOCKED_REASON)]


#: Where pnpm keeps its store: under node_modules, where every linter, test runner and tsc
#: leaves it alone. Left to itself, pnpm keeps it at the root of the project's filesystem,
#: the workspace's mount: antfu/utils' eslint, which lints JSON, reported 154,427 errors
#: in `.pnpm-store/v10/index/*.json`. Given on pnpm's command line, not as
#: `npm_config_store_dir`, which npm 11 warns of on every run ("Unknown env config").
PNPM_STORE = ("--store-dir", "node_modules/.pnpm-store")


#: Where yarn 1 keeps its cache: with the other package managers' (`_dependency_env`), not
#: under the sandbox's HOME, a tmpfs of 1 GiB: immer's cache (every platform's optional
#: rollup binary) took 1.6 GB, and its install failed with ENOSPC. On the command line:
#: yarn 2 and later read `YARN_CACHE_FOLDER` too, with another meaning (a Plug'n'Play
#: project's own cache).
YARN_CLASSIC_CACHE = ("--cache-folder", f"{DEPENDENCY_DIR}/yarn")
#: Largest yarn.lock read to tell yarn 1's from a later one's.
_LOCKFILE_MAX_BYTES = 64 * 1024 * 1024


def _yarn_classic(root: Path) -> bool:
    """Whether the yarn.lock at `root` is yarn 1's: yarn 2 and later write `__metadata`."""
    from assay.untrusted_files import read_untrusted

    head = read_untrusted(root, "yarn.lock", limit=_LOCKFILE_MAX_BYTES)
    return isinstance(head, bytes) and b"\n__metadata:" not in head[:4096]


def _with_store(argv: tuple[str, ...]) -> tuple[str, ...]:
    return (*argv, *PNPM_STORE) if argv[0] == "pnpm" else argv


#: Why a project without a lockfile is installed as it is: the package manager picks
#: today's releases in its ranges.
UNLOCKED_REASON = "no lockfile: the package manager resolves the ranges"


def resolved_unlocked(step: Check) -> bool:
    """Whether the install step `step` resolved the dependencies without a lockfile."""
    return step.source == "package.json" and step.reason == UNLOCKED_REASON


ECOSYSTEM = EcosystemSpec(
    ecosystem=Ecosystem.NODE,
    label="typescript",
    tools=(
        NODE,
        NODE_TEST,
        NPM,
        NPM_TEST,
        NPM_JEST,
        NPM_VITEST,
        TSC,
        ESLINT,
        PRETTIER,
        BIOME,
        OXLINT,
        VITEST,
        JEST,
    ),
    test_files=(
        "**/*.test.*",
        "**/*.spec.*",
        "**/__tests__/**",
        "**/jest.config.*",
        "**/vitest.config.*",
        "**/vitest.workspace.*",
        "**/jest.setup.*",
        "**/vitest.setup.*",
        "**/.mocharc*",
        "**/karma.conf.*",
        "**/playwright.config.*",
        "**/cypress.config.*",
    ),
    config_sections={
        # Every script (one script runs another), and which workspaces the scripts run in.
        "package.json": (
            "jest",
            "vitest",
            "mocha",
            "scripts",
            "workspaces",
            # The linters' settings kept in package.json.
            "eslintConfig",
            "eslintIgnore",
            "prettier",
        ),
    },
    markers=TamperMarkers(
        test_names=(re.compile(r"\b(?:it|test)\s*\(\s*(['\"`])(.+?)\1"),),
        skip=r"\b(?:it|test|describe)\.(?:skip|todo|skipIf)\b|\bx(?:it|describe|test)\s*\(",
        only=r"\b(?:it|test|describe)\.only\b|\bf(?:it|describe)\s*\(",
        trivial_assertions=r"\bexpect\s*\(\s*(?:true|1)\s*\)\s*\.\s*(?:toBe|toEqual)\s*\(\s*(?:true|1)\s*\)",
        assertions=r"\bexpect\s*\(|\bassert\.\w+\s*\(",
    ),
    install=install_steps,
    generic_commands=(Command(("mocha",), Kind.TEST),),
    steering_env=("NODE", "NPM_CONFIG", "VOLTA"),
    home_dirs=(
        ".nvm/versions",
        ".nvm/nvm.sh",
        ".volta/bin",
        ".volta/tools/image",
        ".bun/bin",
        *PACKAGE_MANAGER_HOMES.values(),
    ),
    launchers={name: Launcher(options=True) for name in ("npx", "bunx", "pnpx")},
)
