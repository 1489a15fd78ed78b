"""Install steps for a fresh clone (`assay verify --install`): what each ecosystem runs to get
its dependencies, read from the repository's files, never guessed from the network.

Each ecosystem declares its own steps (`assay.tools`); they look at which files exist
and read a manifest as untrusted, and run nothing. The steps are `Check`s that
`verify` runs in the sandbox, with the network on for these steps only.

When a check's tool is missing, `missing_tool_note` says how to install it where the
check will look for it: the project's own environment.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.evidence import Check
from assay.option_values import first_value
from assay.tools import install_steps as _declared_steps
from assay.tools.spec import INSTALL_TIMEOUT_S

if TYPE_CHECKING:
    from assay.probe import ProbeFailure
    from assay.tool_era import Dating
    from assay.tools.python_requirements import DEV_GROUPS, DEV_REQUIREMENT_PATTERNS

__all__ = [
    "DEV_GROUPS",
    "DEV_REQUIREMENT_PATTERNS",
    "INSTALL_TIMEOUT_S",
    "MADE_ENV",
    "MADE_ENV_STEP",
    "IncompleteEnvironment",
    "activated",
    "command_steps",
    "incomplete_environment",
    "install_steps",
    "missing_tool_note",
]


def __getattr__(name: str) -> Any:
    # Re-exported on first use: a run that installs nothing never reads requirement files.
    if name in ("DEV_GROUPS", "DEV_REQUIREMENT_PATTERNS"):
        from assay.tools import python_requirements

        return getattr(python_requirements, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: The step that makes the project's environment, and where in the workspace it makes it.
MADE_ENV_STEP = "install-venv"
MADE_ENV = ".venv"

#: A given install command runs with the project's environment first on PATH, as if
#: activated: `python` and `pip` in it are the environment's.
_ACTIVATED = (
    f'VIRTUAL_ENV="$PWD/{MADE_ENV}"; PATH="$VIRTUAL_ENV/bin:$PATH"; export VIRTUAL_ENV PATH; '
)


def activated(checks: Sequence[Check], venv: Path) -> list[Check]:
    """`checks` run inside the environment `venv` (the one the install made), as a CI job
    that ran `source .venv/bin/activate` runs them: its `bin` first on PATH, VIRTUAL_ENV
    set. What a check starts by name then comes from it too: a test's `mypy`, a recipe's
    `python`."""
    from assay.tools.python import BUILD_WHEELHOUSE

    # A check that builds the project (a test of its packaging) finds what the build needs
    # in the wheels the install kept, and does not wait on an index it cannot reach.
    offline_pip = {"PIP_FIND_LINKS": str(venv.parent / BUILD_WHEELHOUSE), "PIP_NO_INDEX": "1"}
    prepared = []
    for check in checks:
        path = check.env.get("PATH") or os.environ.get("PATH") or os.defpath
        env = {
            **offline_pip,
            **check.env,
            "VIRTUAL_ENV": str(venv),
            "PATH": f"{venv}/bin{os.pathsep}{path}",
        }
        prepared.append(replace(check, env=env))
    return prepared


def command_steps(commands: Sequence[str]) -> list[Check]:
    """Install steps for shell commands given by whoever set the verification up (a task's
    own environment set-up), run by `sh -c` in the workspace after the declared steps."""
    from assay.tools.spec import install_step

    return [
        install_step(
            f"command-{at}",
            ("sh", "-c", _ACTIVATED + command),
            "the verification's install commands",
            f"install command {at}: {command}",
        )
        for at, command in enumerate(commands, start=1)
    ]


def install_steps(root: Path, *, dated_from: Path | Dating | None = None) -> list[Check]:
    """The install steps for the project at `root`, in order; empty when nothing is needed.

    Where a Python environment is made, the linters, type checkers and test runner the
    plan runs are installed into it first (at the versions pre-commit hooks pin, the others
    as of the date of the tree at `dated_from`, `root` by default: see `assay.tool_era`),
    so that none is left missing and a version the project's own requirements declare,
    installed after them, still wins."""
    from assay.plan import plan_repository

    root = Path(root)
    steps = _declared_steps(root)
    made = next((i for i, s in enumerate(steps) if s.name == MADE_ENV_STEP), None)
    if made is None and not any((root / name).is_file() for name in ("go.mod", "Cargo.toml")):
        return steps
    planned = plan_repository(root).checks
    steps += _other_go_modules(root, planned)
    steps += _other_cargo_manifests(root, planned)
    if made is None:
        return steps
    tools = _planned_tools(root, planned, dated_from or root)
    if tools is None:
        return [*steps, *_mypy_stub_steps(planned)]
    later = steps[made + 1 :]
    if tools.holds:
        later = [_held(step) for step in later]
    return [*steps[: made + 1], tools.step(), *later, *_mypy_stub_steps(planned)]


#: Python programs never installed for the plan: tox and nox make their own environments
#: (with the network); unittest and compileall come with Python. (pyright's recent PyPI
#: wheels carry its JavaScript and run it with the machine's node, offline.)
_NOT_INSTALLED = frozenset({"tox", "nox", "unittest", "compileall"})
_PIP = (f"{MADE_ENV}/bin/python", "-m", "pip", "install", "-q")
#: The upper bounds of the tools' releases as of the tree's date, and the versions the
#: project's lockfile locks, written by the tools' step and held to by every later pip step:
#: a plugin's newest release would otherwise take its tool past them (flake8-bugbear takes
#: flake8, and pyflakes with it, to today's), and a dependency's newest may break the tests
#: the lockfile's passed (werkzeug 3.1.9 with watchdog 7 instead of its locked 6.0.0).
HELD_VERSIONS = f"{MADE_ENV}/assay-held-versions.txt"


@dataclass(frozen=True, slots=True)
class _PlannedTools:
    """What the tools' step installs: each tool as pinned (`ruff==0.6.9`) or not (`ruff`),
    what pre-commit hooks add to them, and the tree's date with the releases of the tools
    nothing pins as of it."""

    requirements: tuple[str, ...]
    pinned_by: tuple[str, ...]
    """The files whose versions the requirements pin: a lockfile, the pre-commit hooks."""
    as_of: tuple[str, dict[str, str]] | None
    locked: tuple[str, dict[str, str]] | None = None
    """The lockfile and every package it locks at one version (normalised names)."""

    @property
    def holds(self) -> bool:
        """Whether later pip steps are held to the constraints this step writes."""
        return self.as_of is not None or bool(self.locked and self.locked[1])

    def step(self) -> Check:
        from assay.tools.spec import install_step

        why = (
            "the linters, type checkers and test runner the plan runs"
            if self.requirements
            else "the versions of the linters the project runs that later pip steps hold to"
        ) + (f", at the versions {' and '.join(self.pinned_by)} pins" if self.pinned_by else "")
        source = self.pinned_by[0] if self.pinned_by else "pyproject.toml"
        newest = (*_PIP, *self.requirements)
        if not self.holds:
            return install_step("python-tools", newest, source, why)
        constraints: list[str] = []
        only_binary: tuple[str, ...] = ()
        if self.as_of is not None:
            when, versions = self.as_of
            constraints += [f"{tool}<={version}" for tool, version in sorted(versions.items())]
            listed = ", ".join(f"{tool} {version}" for tool, version in sorted(versions.items()))
            why += f"; as of the tree's date, {when}: {listed} (where they install)"
            # An old release may lack a wheel for this platform: then none is built.
            only_binary = ("--only-binary=:all:",)
        if self.locked is not None and self.locked[1]:
            lockfile, versions = self.locked
            constraints += [f"{name}=={version}" for name, version in sorted(versions.items())]
            why += f"; every pip step held to the {len(versions)} versions {lockfile} locks"
        # Where the held versions do not install, the newest are, with nothing held after.
        then = (*_PIP, *only_binary, "-c", HELD_VERSIONS, *self.requirements)
        script = f'printf "%s\\n" "$@" > {HELD_VERSIONS}'
        if self.requirements:
            script += (
                f" && {{ {shlex.join(then)} || {{ rm {HELD_VERSIONS}; {shlex.join(newest)}; }}; }}"
            )
        return install_step("python-tools", ("sh", "-c", script, "sh", *constraints), source, why)


def _other_go_modules(root: Path, planned: Sequence[Check]) -> list[Check]:
    """`go mod download` in each module of the tree, other than the root's, that a planned
    Go check runs in (golang-lru's CI tests `arc/`, a module with its own requirements)."""
    from assay.tools.go import builds_from_vendor, module_download

    cwds = {os.path.normpath(c.cwd) for c in planned if c.tool == "go"} - {"."}
    return [
        module_download(cwd)
        for cwd in sorted(cwds)
        if (root / cwd / "go.mod").is_file() and not builds_from_vendor(root, cwd)
    ]


def _other_cargo_manifests(root: Path, planned: Sequence[Check]) -> list[Check]:
    """`cargo fetch` for each manifest of the tree, other than the root's, that a planned
    cargo check builds (shlex's CI builds `--manifest-path fuzz/Cargo.toml`, a workspace
    of its own with its own dependencies, which the root's fetch leaves out)."""
    from assay.tools.spec import install_step

    manifests = {
        os.path.normpath(os.path.join(check.cwd, _manifest_path(check.argv)))
        for check in planned
        if check.tool == "cargo"
    }
    steps = []
    for manifest in sorted(manifests - {"Cargo.toml"}):
        if manifest.startswith("..") or os.path.isabs(manifest) or not (root / manifest).is_file():
            continue
        name = "rust-" + os.path.dirname(manifest).replace("/", "-")
        fetch = ("cargo", "fetch", "--manifest-path", manifest)
        steps.append(install_step(name, fetch, manifest, "crate dependencies", tool="cargo"))
    return steps


def served_checks(step: Check, planned: Sequence[Check]) -> frozenset[str] | None:
    """The names of the checks of `planned` that need what the install step `step` fetches,
    when that is only some of them: a Go module of the tree other than the root's, a cargo
    manifest other than the root's (shlex's `fuzz/`, whose dependencies crates.io alone
    serves); None for a step the whole project needs. A step of the first kind that fails
    keeps those checks from running, not the others."""
    if step.tool == "go" and tuple(step.argv[:3]) == ("go", "mod", "download"):
        module = os.path.normpath(step.cwd)
        if module == ".":
            return None
        return frozenset(
            c.name for c in planned if c.tool == "go" and os.path.normpath(c.cwd) == module
        )
    if step.tool == "cargo" and tuple(step.argv[:2]) == ("cargo", "fetch"):
        manifest = os.path.normpath(os.path.join(step.cwd, _manifest_path(step.argv)))
        if manifest == "Cargo.toml":
            return None
        return frozenset(
            c.name
            for c in planned
            if c.tool == "cargo"
            and os.path.normpath(os.path.join(c.cwd, _manifest_path(c.argv))) == manifest
        )
    return None


def _manifest_path(argv: Sequence[str]) -> str:
    """The manifest a cargo command builds: its `--manifest-path`, else `Cargo.toml`."""
    return first_value(argv, {"--manifest-path"}) or "Cargo.toml"


def _planned_tools(
    root: Path, planned: Sequence[Check], dated_from: Path | Dating
) -> _PlannedTools | None:
    """The Python tools `planned` (the plan for `root`) runs, pinned where the project's
    lockfile pins them, else where its pre-commit configuration does (with what its hooks
    install beside them), the others dated by the tree at `dated_from`; None when the plan
    runs none that needs installing. The lockfile wins: it is the environment the
    maintainers' `uv run` or `poetry run` checks in, where a hook's pin is their editor's."""
    from assay.discovery.pre_commit_hooks import hooked_packages
    from assay.tools.python_requirements import (
        PRE_COMMIT_CONFIG,
        locked_versions,
        pre_commit_additions,
        pre_commit_pins,
        requirement_name,
    )

    # The hooks CI runs are planned only once their pinned release is here: installed
    # before the plan is made again, they are.
    wanted = {_PACKAGE_OF.get(word, word) for word in _tool_words(planned)} | hooked_packages(root)
    wanted -= _NOT_INSTALLED | {""}
    # Linters a task runner's recipe or a tox environment runs, beside the plan's own: held
    # to the tree's date where the project's requirements install them, not installed here.
    stated = _stated_linters(root) - wanted
    if not wanted and not stated:
        return None
    hooked, additions = pre_commit_pins(root), pre_commit_additions(root)
    lock = locked_versions(root)
    lockfile, everything_locked = lock or ("", {})
    locked = {p: everything_locked[p] for p in wanted if p in everything_locked}
    pins = {**{p: v for p, v in hooked.items() if p in wanted | stated}, **locked}
    pinned = tuple(f"{p}=={pins[p]}" if p in pins else p for p in sorted(wanted))
    # A hook's type stubs and plugins are part of the tool as the maintainers run it; one
    # that names a planned tool (iniconfig's mypy hook adds pytest==7.2.0) yields to its pin.
    added = tuple(
        dict.fromkeys(
            r
            for p in sorted(wanted)
            for r in additions.get(p, ())
            if requirement_name(r) not in wanted
        )
    )
    by_hooks = any((p in pins and p not in locked) or p in additions for p in wanted)
    unpinned = (wanted | (stated - everything_locked.keys())) - pins.keys()
    tools = _PlannedTools(
        requirements=pinned + added,
        pinned_by=(*((lockfile,) if locked else ()), *((PRE_COMMIT_CONFIG,) if by_hooks else ())),
        as_of=_era(dated_from, unpinned),
        locked=lock,
    )
    return tools if tools.requirements or tools.holds else None


#: Linters and formatters whose later releases find what earlier ones did not (black's
#: yearly style, flake8's and pylint's new checks), each with the commands that run it:
#: more-itertools 10.5.0's `make check` passes with the black and mypy (stubtest) of its
#: date, and fails with black 25 and with the stubtest of today's mypy.
_DRIFTING_LINTERS = {
    "black": ("black",),
    "flake8": ("flake8",),
    "isort": ("isort",),
    "mypy": ("mypy", "stubtest", "dmypy"),
    "pylint": ("pylint",),
    "ruff": ("ruff",),
}


#: pytest plugins that run a drifting linter as tests, by the linter they run: the jaraco
#: skeleton's projects (zipp, inflect, keyring) declare pytest-mypy and pytest-ruff among
#: their test requirements, and pytest-enabler turns them on.
_LINTING_PLUGINS = {
    "black": "pytest-black",
    "flake8": "pytest-flake8",
    "isort": "pytest-isort",
    "mypy": "pytest-mypy",
    "pylint": "pytest-pylint",
    "ruff": "pytest-ruff",
}
#: Where those plugins are declared: the project's own manifests and requirement files.
_DECLARING_FILES = ("pyproject.toml", "setup.cfg", "setup.py", "tox.ini")


def _stated_linters(root: Path) -> set[str]:
    """The drifting linters a file where the project says what it runs names, and those a
    pytest plugin among its declared requirements runs with its tests."""
    from assay.discovery.stated_runs import names_any

    stated = {tool for tool, commands in _DRIFTING_LINTERS.items() if names_any(root, commands)}
    return stated | _linted_by_pytest_plugins(root)


def _linted_by_pytest_plugins(root: Path) -> set[str]:
    """The drifting linters whose pytest plugin (`_LINTING_PLUGINS`) a file declaring the
    project's requirements names: they run as tests, at the release the plugin brings."""
    from assay.tools.python_requirements import MAX_CONFIG_BYTES, requirement_files
    from assay.untrusted_files import read_untrusted

    plugin = re.compile(
        rb"(?<![\w.-])("
        + b"|".join(re.escape(p.encode()) for p in _LINTING_PLUGINS.values())
        + rb")(?![\w.-])",
        re.IGNORECASE,
    )
    named: set[bytes] = set()
    for rel in (*_DECLARING_FILES, *requirement_files(root)):
        data = read_untrusted(root, rel, limit=MAX_CONFIG_BYTES)
        if isinstance(data, bytes):
            named.update(m.lower() for m in plugin.findall(data))
    return {tool for tool, name in _LINTING_PLUGINS.items() if name.encode() in named}


def _held(step: Check) -> Check:
    """A pip step held to the versions the tools' step wrote (the tools' releases as of the
    tree's date, what the lockfile locks), where it installs so (a project that pins a newer
    release gets it)."""
    if step.argv[: len(_PIP)] != _PIP:
        return step
    script = f'if [ -f {HELD_VERSIONS} ]; then "$@" -c {HELD_VERSIONS} || "$@"; else "$@"; fi'
    reason = (
        f"{step.reason}; held to the tree's date's and its lockfile's versions where that installs"
    )
    return replace(step, argv=("sh", "-c", script, "sh", *step.argv), reason=reason)


def _era(root: Path | Dating, tools: set[str]) -> tuple[str, dict[str, str]] | None:
    """The tree's date (with what kept a tool below a release) and the releases of `tools`
    as of it (`assay.tool_era`); None when it cannot be learnt, or no tool had a release by
    then."""
    from assay.probe import ProbeCache, ProbeFailure
    from assay.tool_era import ceilings, tools_as_of, tree_date

    when = tree_date(root) if tools else None
    if when is None:
        return None
    try:
        python = ProbeCache().get("python").version
    except ProbeFailure:
        return None
    below, held_back = ceilings(root, tools), set[str]()
    versions = tools_as_of(sorted(tools), when, python, below=below, held_back=held_back)
    if not versions:
        return None
    kept = "".join(
        f", {tool} below {below[tool]} (whose default rule selection, which the tree's "
        "configuration relies on, is not the one its maintainers had)"
        for tool in sorted(held_back)
    )
    return f"{when:%Y-%m-%d}{kept}", versions


def _tool_words(planned: Sequence[Check]) -> set[str]:
    """The Python programs `planned` runs by name (`mypy`, `python -m pytest`): those an
    environment is expected to provide."""
    from assay.discovery.toolenv import ENVIRONMENT_TOOLS

    return {word for check in planned if (word := _tool_word(check)) in ENVIRONMENT_TOOLS}


def _tool_word(check: Check) -> str:
    """The program `check` runs by name: `mypy` for `mypy src` and `python -m mypy src`."""
    argv = tuple(check.argv)
    word = argv[2] if len(argv) > 2 and argv[1] == "-m" else argv[0] if argv else ""
    return "" if "/" in word else word


#: mypy's own way to get the stubs a project's imports lack: it asks pip for them, which the
#: check, run without the network, cannot do.
_INSTALL_TYPES = ("--install-types", "--non-interactive")
# The first run finds and installs the stubs; its findings are the check's to report.
_QUIETLY = '"$@" >/dev/null 2>&1 || true'


def _mypy_stub_steps(planned: Sequence[Check]) -> list[Check]:
    """For a planned mypy run with `--install-types` (freezegun's tox), one run with the
    network, after the project is installed, so that the stubs it installs are there for the
    check; what that run finds is not its verdict."""
    from assay.tools.spec import install_step

    check = next(
        (c for c in planned if _tool_word(c) == "mypy" and _INSTALL_TYPES[0] in c.argv), None
    )
    if check is None:
        return []
    args = tuple(check.argv[3:] if check.argv[1:2] == ("-m",) else check.argv[1:])
    args += tuple(a for a in _INSTALL_TYPES if a not in args)
    # Run where the check runs: its paths are relative to that directory.
    python = os.path.relpath(f"{MADE_ENV}/bin/python", check.cwd)
    step = install_step(
        "mypy-stubs",
        ("sh", "-c", _QUIETLY, "sh", python, "-m", "mypy", *args),
        check.source or "",
        "the type stubs mypy's --install-types asks pip for, installed with the network",
    )
    return [replace(step, cwd=check.cwd)]


@dataclass(frozen=True, slots=True)
class IncompleteEnvironment:
    """A project's own virtualenv that lacks Python tools its plan runs."""

    venv: str
    """Its directory, relative to the project root (`.venv`)."""
    lacking: tuple[str, ...]
    """The programs the plan runs that it does not have, sorted."""

    def describe(self) -> str:
        return (
            f"{self.venv} lacks {', '.join(self.lacking)}, which the plan runs: the install "
            f"steps build a complete environment in the workspace from what the project "
            f"declares (the project's {self.venv} is left as it is)"
        )


def incomplete_environment(root: Path) -> IncompleteEnvironment | None:
    """The project's own in-tree virtualenv when it lacks a Python tool the plan runs, else
    None (no such virtualenv, or it has them all).

    `--install` must leave nothing missing, and the project's environment is the user's:
    it is never installed into. Where it is incomplete, the workspace gets an environment
    of its own instead, built from the project's declarations as a fresh clone's would be."""
    from assay.tools.python import IN_TREE_VENVS

    root = Path(root)
    venv = next((v for v in IN_TREE_VENVS if (root / v / "bin" / "python").exists()), None)
    if venv is None:
        return None
    from assay.plan import plan_repository

    words = _tool_words(plan_repository(root).checks) - _NOT_INSTALLED
    lacking = tuple(sorted(w for w in words if not (root / venv / "bin" / w).exists()))
    return IncompleteEnvironment(venv, lacking) if lacking else None


# --------------------------------------------------------------------------- missing tools


def missing_tool_note(failure: ProbeFailure, check: Check, root: Path) -> str:
    """What to run when a check's tool is missing: for a Python tool, the exact command that
    installs it into the environment the check uses (the project's `.venv`), or how to set
    one up; for anything else, the tool declaration's hint."""
    package = _python_package(failure, check)
    if package is None:
        return failure.install_hint
    venv = _venv_in_use(check, Path(root))
    if venv is not None:
        return f"{package} is not installed in {venv}: `{_pip(venv, Path(root))} install {package}`"
    return (
        f"{package} is not installed: `assay verify --install` sets the project up in .venv "
        f"from what it declares, or install it yourself (`python3 -m pip install {package}`)"
    )


def _python_package(failure: ProbeFailure, check: Check) -> str | None:
    """The Python tool a failure is about, when it is one: a missing program (`mypy`,
    `flake8`), or a `python -m X` whose interpreter has no module X."""
    from assay.discovery.toolenv import ENVIRONMENT_TOOLS
    from assay.probe import ProbeError, ToolchainError

    argv = tuple(check.argv)
    word = None
    if isinstance(failure, ToolchainError):
        word = os.path.basename(failure.binary)
    elif isinstance(failure, ProbeError) and len(argv) > 2 and argv[1] == "-m" and failure.result:
        output = failure.result.stdout.text + failure.result.stderr.text
        missing = (f"No module named {argv[2]}", f"No module named '{argv[2]}'")
        word = argv[2] if any(m in output for m in missing) else None
    if word is None or word not in ENVIRONMENT_TOOLS:
        return None
    return _PACKAGE_OF.get(word, word) or None


#: Commands whose distribution on PyPI has another name.
_PACKAGE_OF = {"py.test": "pytest", "unittest": "", "compileall": ""}


def _venv_in_use(check: Check, root: Path) -> str | None:
    """The in-tree virtualenv the check runs from (`.venv/bin/python -m mypy`), else the
    project's own one that a bare `mypy` would be taken from once installed there."""
    from assay.discovery.toolenv import VENV_NAMES

    head = check.argv[0] if check.argv else ""
    if "/bin/" in head and not os.path.isabs(head):
        return head.split("/bin/", 1)[0]
    return next((v for v in VENV_NAMES if (root / v / "bin" / "python").exists()), None)


def _pip(venv: str, root: Path) -> str:
    """How to run pip for `venv`: its own, uv's for a uv-made one (which has no pip)."""
    if (root / venv / "bin" / "pip").exists():
        return f"{venv}/bin/pip"
    from assay.probe_record import PYVENV_CFG_MAX_BYTES
    from assay.untrusted_files import read_untrusted

    # The tree's file, read as one: not through a link, not a fifo or a device, within a bound.
    cfg = read_untrusted(root / venv, "pyvenv.cfg", limit=PYVENV_CFG_MAX_BYTES)
    made_by_uv = isinstance(cfg, bytes) and b"uv =" in cfg
    return f"uv pip --python {venv}" if made_by_uv else f"{venv}/bin/python -m pip"
