"""Proving that the environment a change's checks run in is the one its base installs (`--protect`).

An in-tree virtualenv is gitignored: nothing hashes it, nothing restores it, and the
change can write anything into it. A `.pth` file there runs at every interpreter start,
a `sitecustomize.py` too, and a `pytest11` entry point is loaded by pytest as a plugin:
each can make failing tests pass. So under `--protect` each environment the checks will
use is proven, or the run is not believed:

- the interpreter: `bin/python*` links to an interpreter outside the tree, and
  `pyvenv.cfg`'s `home` (where the standard library is found) lies outside it too;
- every installed distribution's files hash to what its install record (`RECORD`)
  says (`assay.install_records`); a `.pyc` in `__pycache__` (which records do not hash) is never read, because
  runners are started with `PYTHONPYCACHEPREFIX` elsewhere;
- every other file of `site-packages` and `bin` is accounted for by a verified record
  (a `.pth` file, a `sitecustomize`/`usercustomize` module or a dist-info's
  `entry_points.txt` that none accounts for is named), and nothing there is a link;
- a distribution that loads code by itself into every run (a `.pth`, a start-up module,
  an entry point pytest or flake8 load without being asked) must be one the base's
  manifests declare, directly or through what they require (`assay.base_requirements`):
  a record is written by whoever wrote the files, so a whole fake distribution with a
  consistent record is stopped by the base, not by its record;
- start-up code of an install the tree's own build wrote (the project, or anything
  installed from a directory of the tree) does no more than find the tree's code: import
  paths, or a build backend's editable finder or loader (`assay.editable_finder`); that
  build wrote the record too, so the record proves nothing of it;
- a directory of the tree on the import path (the working directory, `PYTHONPATH`, a
  `.pth` line such as an editable install's) holds no start-up module and no metadata
  declaring such entry points.

A distribution whose files are the workspace's own (an editable install: `direct_url.json`
points into the tree) is fine: those files are code under test like any other. So is a
legacy editable install (`setup.py develop`), which leaves no record: an `easy-install.pth`
whose lines only name directories of the tree (scanned as any directory on the import
path is), and the `NAME.egg-link` beside it.

What stays out of reach, said plainly: a change that rewrites an installed file *and* its
record consistently, in a distribution the base declares, is consistent with the only
record there is; nothing offline says what the file should hold. `assay verify --install
--protect` closes this by building the environment afresh, and holding what its tools step
installed, before any of the project's code ran, to what it was then
(`assay.installed_tools`).
A `node_modules` the tree brings cannot be proven: a lockfile's `integrity` hashes the
packed tarball, and nothing records the unpacked files, so under `--protect` one the checks
would use is reported unproven. One that `--install` makes with npm, running no script of
the tree's, from a lockfile that keeps every package the base's locks, and that the sandbox
then holds read-only, is believed (`assay.npm_install_proof`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.base_requirements import Declared, declared_by_base, entry_point, normalise
from assay.editable_finder import FINDER_PREFIX, startup_line_problem
from assay.install_records import (
    METADATA_MAX_BYTES,
    STARTUP_MODULES,
    Budget,
    Distribution,
    accepted_names,
    autoloaded_entry_points,
    entry_point_module,
    read_distribution,
)
from assay.untrusted_files import (
    Link,
    OpenFile,
    Refused,
    list_untrusted,
    open_untrusted,
    read_untrusted,
    walk_untrusted,
)

if TYPE_CHECKING:
    from assay.evidence import Check
    from assay.npm_install_proof import HeldInstall
    from assay.session import Session

#: In-tree virtualenv names discovery looks for (`assay.discovery.toolenv.VENV_NAMES`).
VENV_NAMES = (".venv", "venv", "env", ".env", "virtualenv")
#: Environment directories a workspace links to its source's instead of copying them.
LINKED_ENVIRONMENTS = frozenset({".venv", "venv", "node_modules", ".tox", ".nox"})
#: What a tool that makes virtualenvs writes into `bin` besides the interpreter links.
_ACTIVATION = re.compile(
    r"activate(\.\w+)?|activate_this\.py|Activate\.ps1|(de)?activate\.bat|pydoc\.bat"
)
_INTERPRETER = re.compile(r"python(3(\.\d+)?)?|pypy(3(\.\d+)?)?")
#: The most bytes of a small file read whole (`pyvenv.cfg`, a `.pth` file).
SMALL_FILE_MAX_BYTES = 1024 * 1024
#: How many links from one interpreter name to the next are followed inside `bin`.
LINK_HOPS = 8
#: How many problems a proof keeps (the first ones name the cause; the rest are counted).
MAX_PROBLEMS = 200
#: How many problems the report's note names.
NOTE_NAMES = 5
#: What a problem with start-up code the tree's own build installed says.
_BUILT_BY_TREE = "own build installed"


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing that keeps an environment from being proven: where, and what is wrong."""

    path: str
    """Relative to the workspace root."""
    problem: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "problem": self.problem}


@dataclass(frozen=True, slots=True)
class EnvironmentProof:
    """What proving the workspace's environments found."""

    checked: tuple[str, ...] = ()
    """The environments looked at (`.venv`, `node_modules`), relative to the workspace."""
    problems: tuple[Problem, ...] = ()
    pytest_entry_points: tuple[tuple[str, str], ...] = ()
    """The proven pytest plugins (`pytest11` entry points): (name, module), to load by
    name explicitly."""
    more_problems: int = 0
    """Problems found beyond the `MAX_PROBLEMS` kept."""
    unproven: tuple[str, ...] = ()
    """The ecosystems (`python`, `node`) whose environment has a problem."""
    venvs: tuple[str, ...] = ()
    """The in-tree virtualenvs among `checked`."""
    held: tuple[str, ...] = ()
    """The `node_modules` among `checked` that assay's own install made and the sandbox
    holds read-only (`assay.npm_install_proof`)."""

    @property
    def proven(self) -> bool:
        return not self.problems

    @property
    def pytest_plugins(self) -> tuple[str, ...]:
        """The proven pytest plugins' modules."""
        return tuple(dict.fromkeys(module for _, module in self.pytest_entry_points))

    def blocks(self, check: Check) -> bool:
        """Whether `check` would run in an environment that is not proven."""
        return ("python" in self.unproven and uses_python(check)) or (
            "node" in self.unproven and _uses_node(check)
        )

    def note(self) -> str | None:
        """Why a check that would run in these environments is not run, and what to do
        about it; None when they are proven."""
        if self.proven:
            return None
        named = "; ".join(f"{p.path}: {p.problem}" for p in self.problems[:NOTE_NAMES])
        rest = len(self.problems) - NOTE_NAMES + self.more_problems
        more = f" (and {rest} more problems)" if rest > 0 else ""
        advice = []
        if any(_BUILT_BY_TREE in p.problem for p in self.problems):
            advice.append(
                "Under --protect, an install the tree builds may put only import paths and a "
                "build backend's editable finder or loader where they run at every start"
            )
        elif "python" in self.unproven:
            advice.append(
                "Rebuild the virtualenv from the base's manifests (`assay verify --install "
                "--protect` builds a fresh one), or delete it"
            )
        if "node" in self.unproven:
            advice.append(
                "Checks that need node_modules are believed under --protect only where "
                "`--install` builds it with npm from a package-lock.json that keeps every "
                "package the base's locks; otherwise verify them without --protect, in a "
                "tree whose node_modules you built yourself"
            )
        return (
            "the environment it would run in is not proven to be what the base installs, so "
            f"it was not run: {named}{more}. {' '.join(advice)}"
        )

    def to_dict(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "checked": list(self.checked),
            "proven": self.proven,
            "problems": [p.to_dict() for p in self.problems],
            "pytest_plugins": list(self.pytest_plugins),
        }
        if self.held:
            document["held_read_only"] = list(self.held)
        if self.more_problems:
            document["more_problems"] = self.more_problems
        if (note := self.note()) is not None:
            document["note"] = note
        return document


# --------------------------------------------------------------------------- the session's part


def protect_environment(
    session: Session,
    checks: Sequence[Check],
    repository: Path,
    base: str | None,
    node_modules: HeldInstall | None = None,
) -> dict[str, str]:
    """Prove the environments `checks` will use in `session`'s workspace (the base of
    `repository` at `base` says which distributions may load code by themselves), keep
    the proof in the session's record, keep every check that would run in an unproven
    one from starting (`Session.unproven`: it is `inconclusive`, never run and never
    passed), and return the variables every check then runs with. `node_modules`: what
    became of assay's own npm install, when it made one (`assay.npm_install_proof`)."""
    workspace = session.workspace
    if workspace is None:
        return {}
    declared = declared_by_base(repository, base) if base else Declared(problem="no base was given")
    record = workspace.provisioned
    proof = prove_environments(
        workspace.path,
        checks,
        declared,
        source=Path(record.source) if record is not None else None,
        linked=record.linked if record is not None else (),
        node_modules=node_modules,
    )
    session.record = replace(session.record, environment=proof.to_dict())
    if (note := proof.note()) is not None:
        session.unproven = {c.name: f"{c.name}: {note}" for c in checks if proof.blocks(c)}
    if base:
        from assay.own_plugins import own_plugin_files

        session.own_plugins = own_plugin_files(repository, base, workspace.path, declared)
    named = plugins_named(workspace.path, checks)
    pycache = session.reports / "pycache"
    _seed_byte_code(session, checks, pycache)
    return launch_env(proof, pycache, named)


def _seed_byte_code(session: Session, checks: Sequence[Check], pycache: Path) -> None:
    """The standard library's byte-code under `pycache`, for the interpreters the Python
    checks run (`assay.stdlib_bytecode`): each binary, and the interpreter beside it."""
    from assay.check_execution import locate
    from assay.sandbox.base import sandbox_uid
    from assay.stdlib_bytecode import seed_standard_libraries

    workspace = session.workspace
    if workspace is None:
        return
    binaries = {b for c in checks if uses_python(c) and (b := locate(c, root=workspace.path))}
    interpreters = {*binaries, *(os.path.join(os.path.dirname(b), "python3") for b in binaries)}
    record = workspace.provisioned
    untrusted = [workspace.path.resolve()]
    if record is not None:
        untrusted.append(Path(record.source).resolve())
    seed_standard_libraries(pycache, sorted(interpreters), untrusted, sandbox_uid(session.sandbox))


def launch_env(
    proof: EnvironmentProof, pycache: Path, named: Collection[str] = ()
) -> dict[str, str]:
    """Variables that keep runners on what was proven: byte-code is read and written
    under `pycache` (outside the workspace), never from a `__pycache__` nothing hashes;
    where the checks run from an in-tree virtualenv, pytest loads no plugin by itself,
    only the ones proven there, named (`PYTEST_PLUGINS`, which reaches pytest however it
    is started), but those the runs load themselves by name (`named`, `-p anyio`): older
    pytest (8.3) refuses a module registered under two names. An interpreter outside
    the tree keeps its own plugins: they are the host's, and the tree's directories on its
    import path are checked all the same. No interpreter reads the user's site-packages
    (`PYTHONNOUSERSITE`): the sandbox's home is writable, and a `.pth` file the code under
    test wrote there ran at the start of every later Python process of the session (a
    test's fresh interpreter imported a right `calc.add` from it)."""
    env = {"PYTHONPYCACHEPREFIX": str(pycache), "PYTHONNOUSERSITE": "1"}
    if proof.venvs:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        loaded = {m for n, m in proof.pytest_entry_points if n in named or m in named}
        if plugins := [m for m in proof.pytest_plugins if m not in loaded]:
            env["PYTEST_PLUGINS"] = ",".join(plugins)
    return env


def plugins_named(workspace: Path, checks: Sequence[Check]) -> set[str]:
    """The plugins the pytest checks load by name (`-p NAME`), in their arguments, their
    `PYTEST_ADDOPTS` or the `addopts` of the configuration pytest reads where they run."""
    from assay.discovery.files import RepoFiles
    from assay.discovery.python import pytest_addopts

    named: set[str] = set()
    for check in checks:
        if check.tool != "pytest":
            continue
        words = [*check.argv, *check.env.get("PYTEST_ADDOPTS", "").split()]
        words += pytest_addopts(RepoFiles(str(workspace / check.cwd))) or ()
        for at, word in enumerate(words):
            if word == "-p" and at + 1 < len(words):
                named.add(words[at + 1])
            elif word.startswith("-p") and len(word) > 2 and not word.startswith("-p="):
                named.add(word[2:])
    return named


def discard_linked_environments(
    session: Session, only: Collection[str] | None = None
) -> tuple[str, ...]:
    """Remove the workspace's links to the source's environments (those at the relative
    paths in `only`, when given), so that install steps build fresh ones from the
    (restored) manifests instead of keeping the tree's."""
    workspace = session.workspace
    if workspace is None or workspace.provisioned is None:
        return ()
    removed = []
    for rel in workspace.provisioned.linked:
        path = workspace.path / rel
        if only is not None and rel not in only:
            continue
        if rel.rsplit("/", 1)[-1] in LINKED_ENVIRONMENTS and path.is_symlink():
            path.unlink()
            removed.append(rel)
    return tuple(removed)


# --------------------------------------------------------------------------- the proof


def prove_environments(
    workspace: Path,
    checks: Sequence[Check],
    declared: Declared,
    *,
    source: Path | None = None,
    linked: Sequence[str] = (),
    node_modules: HeldInstall | None = None,
) -> EnvironmentProof:
    """Prove every environment `checks` would use in `workspace` (see the module
    docstring). `source` and `linked`: the tree the workspace was made from and the
    environment directories the workspace links to there instead of copying."""
    places = _Places(Path(workspace), source, tuple(linked))
    found = _Findings()
    checked: list[str] = []
    venvs: list[str] = []
    plugins: list[tuple[str, str]] = []
    import_dirs: list[tuple[str, bool]] = []
    unproven: list[str] = []
    if any(uses_python(c) for c in checks):
        for index, venv in enumerate(_venvs(places, checks, found)):
            checked.append(venv)
            venvs.append(venv)
            venv_plugins, pth_dirs = _prove_venv(places, venv, declared, found)
            if index == 0:
                plugins = venv_plugins  # the interpreter discovery plans with is the first
            import_dirs += [(d, True) for d in pth_dirs]
        import_dirs += _check_import_dirs(places, checks)
        for directory, at_startup in dict.fromkeys(import_dirs):
            _scan_import_dir(places, directory, at_startup, declared, found)
        if found.problems:
            unproven.append("python")
    held: list[str] = []
    if any(_uses_node(c) for c in checks):
        before = len(found.problems) + found.dropped
        for modules in _node_modules(places, checks):
            checked.append(modules)
            if node_modules is not None and modules in node_modules.held:
                held.append(modules)
                continue
            why = node_modules.why_not if node_modules is not None else None
            found.add(
                modules,
                "node_modules cannot be proven to be what the base's lockfile installs: a "
                "lockfile's integrity hashes the packed tarballs and nothing records the "
                "unpacked files, so any of them may have been rewritten"
                + (f" (assay's install could not be believed: {why})" if why else ""),
            )
        if len(found.problems) + found.dropped > before:
            unproven.append("node")
    return EnvironmentProof(
        checked=tuple(checked),
        problems=tuple(found.problems),
        pytest_entry_points=tuple(dict.fromkeys(plugins)),
        more_problems=found.dropped,
        unproven=tuple(unproven),
        venvs=tuple(venvs),
        held=tuple(held),
    )


@dataclass
class _Findings:
    problems: list[Problem] = field(default_factory=list)
    dropped: int = 0
    budget: Budget = field(default_factory=Budget)

    def add(self, path: str, problem: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(Problem(path, problem))
        else:
            self.dropped += 1


@dataclass(frozen=True, slots=True)
class _Places:
    """Where a workspace path is read: in the workspace, or through a link assay made to
    the source's environment directory, in the source (both read as untrusted trees)."""

    workspace: Path
    source: Path | None
    linked: tuple[str, ...]

    def locate(self, rel: str) -> tuple[Path, str] | str:
        """(root, rel) to read `rel` from, or why it cannot be read."""
        for link in self.linked:
            if rel != link and not rel.startswith(link + "/"):
                continue
            path = self.workspace / link
            if self.source is None or not path.is_symlink():
                return self.workspace, rel  # not a link (any more): the workspace's own
            if os.readlink(path) != str(self.source / link):
                return f"{link} is a link that does not lead where the workspace was linked"
            return self.source, rel
        return self.workspace, rel

    def inside(self, path: str) -> bool:
        """Whether the absolute `path` lies in the workspace or the tree it was made from,
        by its words or where the kernel would lead it: `.venv/k/../../usr/bin/python3`,
        with `k` a link into a deeper directory of the tree, reads as /usr/bin but is the
        tree's."""
        paths = {os.path.normpath(path), os.path.realpath(path)}
        roots = [self.workspace, *([self.source] if self.source else [])]
        for root in roots:
            for form in {str(root), os.path.realpath(root)}:
                if any(p == form or p.startswith(form.rstrip("/") + "/") for p in paths):
                    return True
        return False

    def absolute(self, rel: str) -> str:
        located = self.locate(rel)
        root = located[0] if isinstance(located, tuple) else self.workspace
        return str(root / rel)


def uses_python(check: Check) -> bool:
    """Whether `check` runs Python (or might: a tool assay does not know)."""
    return _ecosystem(check) in ("python", "generic")


def _uses_node(check: Check) -> bool:
    argv0 = check.argv[0] if check.argv else ""
    return _ecosystem(check) in ("node", "generic") or "node_modules/" in argv0


def _ecosystem(check: Check) -> str:
    from assay.tools import tool_spec

    spec = tool_spec(check.tool or "")
    return spec.ecosystem.value if spec is not None else "generic"


def _venvs(places: _Places, checks: Sequence[Check], found: _Findings) -> list[str]:
    """In-tree virtualenvs the checks use: those discovery plans with, and any a check's
    command lies in (`pkg/.venv/bin/python`, `.tox/py/bin/pytest`). One reached through a
    link the tree made (not the workspace's own link to its source) is a problem."""
    candidates = list(VENV_NAMES)
    for check in checks:
        argv0 = check.argv[0] if check.argv else ""
        if "/" not in argv0:
            continue
        path = argv0 if os.path.isabs(argv0) else str(places.workspace / check.cwd / argv0)
        path = os.path.normpath(path)
        if places.inside(path):
            parts = os.path.relpath(path, places.workspace).split(os.sep)
            candidates += ["/".join(parts[:depth]) for depth in range(len(parts) - 1, 0, -1)]
    venvs = []
    for rel in dict.fromkeys(candidates):
        state = _venv_state(places, rel)
        if isinstance(state, str):
            found.add(rel, state)
        elif state:
            venvs.append(rel)
    return venvs


def _venv_state(places: _Places, rel: str) -> bool | str:
    """Whether `rel` is a virtualenv (it holds `pyvenv.cfg`), or why that cannot be told."""
    located = places.locate(f"{rel}/pyvenv.cfg")
    if isinstance(located, str):
        return located
    config = read_untrusted(*located, limit=SMALL_FILE_MAX_BYTES, single_link=False)
    if isinstance(config, Refused):
        return f"it may be an environment, but {config.reason}"
    return config is not None


# --------------------------------------------------------------------------- one virtualenv


def _prove_venv(
    places: _Places, venv: str, declared: Declared, found: _Findings
) -> tuple[list[tuple[str, str]], list[str]]:
    """Prove one virtualenv; returns its proven pytest plugins and the directories its
    `.pth` files put on the import path inside the tree."""
    located = places.locate(venv)
    if isinstance(located, str):
        found.add(venv, located)
        return [], []
    root = located[0]
    _prove_interpreter(places, root, venv, found)
    site_dirs = _site_packages(root, venv, found)
    dists: list[Distribution] = []
    walked: dict[str, list[tuple[str, str]]] = {}
    for site in site_dirs:
        entries = walk_untrusted(root, site)
        if not isinstance(entries, list):
            found.add(site, entries.reason if isinstance(entries, Refused) else "missing")
            continue
        walked[site] = [(e.path, e.kind) for e in entries if e.kind != "dir"]
        for entry in entries:
            name = entry.path[len(site) + 1 :]
            if entry.kind == "dir" and "/" not in name and name.endswith(".dist-info"):
                dists.append(read_distribution(root, site, name, venv, found.add, found.budget))
    owned = set().union(*(d.owned for d in dists))
    developed: list[str] = []
    for site, files in walked.items():
        for path, kind in files:
            if path in owned:
                continue
            if kind == "file" and (dirs := _develop_install(places, root, site, path)) is not None:
                developed += dirs
                continue
            _unaccounted(site, path, kind, found)
    _unaccounted_bin(root, venv, owned, found)
    accepted = accepted_names(dists, declared)
    plugins: list[tuple[str, str]] = []
    for dist in dists:
        if not dist.verified:
            continue
        loads = [f"{g} entry point {n}" for g, eps in dist.entry_points.items() for n, _ in eps]
        hooks = [f"{n}, run at every start" for n in dict.fromkeys(dist.startup)] + loads
        if not hooks:
            continue
        if _built_by_tree(dist, places, declared):
            _hold_tree_startup(places, root, dist, found)
        if dist.name not in accepted and not _editable_path_only(dist, places, root, declared):
            found.add(
                dist.directory,
                f"{dist.name} loads code into every run ({', '.join(hooks[:3])}) but the "
                "base's manifests do not declare it, nor anything they require",
            )
            continue
        plugins += [(n, entry_point_module(v)) for n, v in dist.entry_points.get("pytest11", ())]
    pth_dirs = [d for dist in dists if dist.verified for d in _pth_dirs(places, root, dist)]
    return plugins, [*pth_dirs, *developed]


def _prove_interpreter(places: _Places, root: Path, venv: str, found: _Findings) -> None:
    """`pyvenv.cfg`'s `home` and every `bin/python*` lead out of the tree."""
    config = read_untrusted(
        root, f"{venv}/pyvenv.cfg", limit=SMALL_FILE_MAX_BYTES, single_link=False
    )
    if not isinstance(config, bytes):
        found.add(f"{venv}/pyvenv.cfg", "it could not be read")
        return
    for line in config.decode("utf-8", "replace").splitlines():
        key, eq, value = line.partition("=")
        if eq and key.strip().lower() in ("home", "executable", "base-executable"):
            where = value.strip()
            if not os.path.isabs(where) or places.inside(where):
                found.add(
                    f"{venv}/pyvenv.cfg",
                    f"its {key.strip()} ({where}) is inside the tree: the interpreter and its "
                    "standard library would be the tree's",
                )
    names = list_untrusted(root, f"{venv}/bin")
    if not isinstance(names, list):
        found.add(f"{venv}/bin", "it could not be listed")
        return
    for name in names:
        if _INTERPRETER.fullmatch(name):
            _follow_interpreter(places, root, venv, name, found)


def _follow_interpreter(
    places: _Places, root: Path, venv: str, name: str, found: _Findings
) -> None:
    current = name
    for _ in range(LINK_HOPS):
        path = f"{venv}/bin/{current}"
        with open_untrusted(root, path, single_link=False) as entry:
            if isinstance(entry, OpenFile):
                found.add(path, "an interpreter copied into the tree: nothing proves what it is")
                return
            if not isinstance(entry, Link):
                found.add(path, entry.reason if isinstance(entry, Refused) else "a dangling link")
                return
            target = entry.target
        if "/" not in target:
            current = target  # python -> python3.12: a sibling in bin
            continue
        absolute = target if os.path.isabs(target) else str(root / venv / "bin" / target)
        if places.inside(absolute):
            found.add(path, f"it links to {target}, inside the tree")
        return
    found.add(f"{venv}/bin/{name}", f"more than {LINK_HOPS} links lead from it")


def _site_packages(root: Path, venv: str, found: _Findings) -> list[str]:
    """`lib*/python*/site-packages` of the virtualenv; `lib64 -> lib` is the same directory."""
    sites: list[str] = []
    for lib in ("lib", "lib64"):
        with open_untrusted(root, f"{venv}/{lib}") as entry:
            if isinstance(entry, Link):
                if entry.target.rstrip("/") not in ("lib", str(root / venv / "lib")):
                    found.add(f"{venv}/{lib}", f"a link to {entry.target}, not to lib")
                continue
        names = list_untrusted(root, f"{venv}/{lib}")
        if isinstance(names, Refused):
            found.add(f"{venv}/{lib}", names.reason)
        for name in names if isinstance(names, list) else ():
            if name.startswith(("python", "pypy")):
                site = f"{venv}/{lib}/{name}/site-packages"
                if list_untrusted(root, site) is not None:
                    sites.append(site)
    return sites


def _editable_path_only(
    dist: Distribution, places: _Places, root: Path, declared: Declared
) -> bool:
    """An editable install of the tree's own project, when the base names no project to
    check it by: accepted only if all it adds is import paths (no code, no plugin)."""
    into_tree = dist.editable_from is not None and places.inside(dist.editable_from)
    if declared.projects or not into_tree or dist.entry_points:
        return False
    for name in dict.fromkeys(dist.startup):
        if not name.endswith(".pth"):
            return False
        site = dist.directory.rsplit("/", 1)[0]
        lines = _pth_lines(root, f"{site}/{name}")
        if lines is None or any(_runs_code(line) for line in lines):
            return False
    return True


def _built_by_tree(dist: Distribution, places: _Places, declared: Declared) -> bool:
    """Whether the tree's own build code wrote the distribution: installed from a
    directory or archive of the tree, or the project the base declares."""
    from_tree = dist.built_from is not None and places.inside(dist.built_from)
    return from_tree or dist.name in declared.projects


def _hold_tree_startup(places: _Places, root: Path, dist: Distribution, found: _Findings) -> None:
    """Start-up code of an install the tree's build wrote does no more than find the
    tree's code (`assay.editable_finder`): its record is consistent because that same
    build wrote it, so nothing else proves what it runs."""
    site = dist.directory.rsplit("/", 1)[0]
    for name in dict.fromkeys(dist.startup):
        path = f"{site}/{name}"
        if not name.endswith(".pth"):
            found.add(path, f"{dist.name}'s {_BUILT_BY_TREE} a start-up module, run at every start")
            continue
        for line in _pth_lines(root, path) or ():
            why = startup_line_problem(root, site, line, dist.owned, places.inside)
            if why is not None:
                found.add(path, f"{dist.name}'s {_BUILT_BY_TREE} this .pth file and {why}")
                break


# --------------------------------------------------------------------------- files no record accounts for


def _develop_install(places: _Places, root: Path, site: str, path: str) -> list[str] | None:
    """The tree's directories a legacy editable install (`setup.py develop`, which older
    setuptools and pins of it still make) puts on the import path, when `path` is one of
    the two files it writes and they hold nothing else: `NAME.egg-link` (read by
    installers, never by Python: none) and `easy-install.pth` (each line a directory of the
    tree, none that runs code). None when it is not such a file."""
    name = path[len(site) + 1 :]
    link = name.endswith(".egg-link") and "/" not in name
    if not link and name != "easy-install.pth":
        return None
    lines = [line for line in _pth_lines(root, path) or () if line and not line.startswith("#")]
    if link:
        lines = lines[:1]  # the second line, `.`, is relative to the first
    if not lines or any(_runs_code(line) for line in lines):
        return None
    dirs = [os.path.normpath(os.path.join(str(root / site), line)) for line in lines]
    if not all(places.inside(d) for d in dirs):
        return None
    return [] if link else dirs


def _unaccounted(site: str, path: str, kind: str, found: _Findings) -> None:
    name = path[len(site) + 1 :]
    parts = name.split("/")
    if "__pycache__" in parts[:-1] and kind == "file":
        return  # never read: runners start with PYTHONPYCACHEPREFIX elsewhere
    if name == "README.txt":
        return  # the interpreter's own note in an empty site-packages
    if kind == "link":
        found.add(path, "a symbolic link no install record accounts for")
    elif kind != "file":
        found.add(path, "not a regular file")
    elif name.endswith(".pth") and "/" not in name:
        found.add(
            path,
            "a .pth file no install record accounts for: Python runs its import lines at every start",
        )
    elif parts[0].split(".", 1)[0] in STARTUP_MODULES:
        found.add(path, "a start-up module no install record accounts for: imported at every start")
    elif parts[0].endswith((".dist-info", ".egg-info")):
        found.add(
            path, "metadata no install record accounts for (its entry points would be loaded)"
        )
    else:
        found.add(path, "a file no install record accounts for")


def _unaccounted_bin(root: Path, venv: str, owned: set[str], found: _Findings) -> None:
    entries = walk_untrusted(root, f"{venv}/bin")
    for entry in entries if isinstance(entries, list) else ():
        name = entry.path[len(venv) + 5 :]
        if "/" in name or entry.kind == "dir" or entry.path in owned:
            continue  # a directory in bin is nothing a command line names
        if _INTERPRETER.fullmatch(name) or _ACTIVATION.fullmatch(name):
            continue  # followed out of the tree above; activation scripts run nowhere
        found.add(entry.path, "a command no install record accounts for")


# --------------------------------------------------------------------------- the import path


def _pth_lines(root: Path, rel: str) -> list[str] | None:
    data = read_untrusted(root, rel, limit=SMALL_FILE_MAX_BYTES, single_link=False)
    if not isinstance(data, bytes):
        return None
    return [line.rstrip() for line in data.decode("utf-8", "replace").splitlines()]


def _runs_code(line: str) -> bool:
    return line.startswith(("import ", "import\t"))


def _pth_dirs(places: _Places, root: Path, dist: Distribution) -> list[str]:
    """Directories of the tree the distribution's `.pth` files put on the import path."""
    dirs = []
    for name in dist.startup:
        if not name.endswith(".pth"):
            continue
        site = dist.directory.rsplit("/", 1)[0]
        for line in _pth_lines(root, f"{site}/{name}") or ():
            if not line or line.startswith("#") or _runs_code(line):
                continue
            absolute = os.path.normpath(os.path.join(str(root / site), line))
            if places.inside(absolute):
                dirs.append(absolute)
    return dirs


def _check_import_dirs(places: _Places, checks: Sequence[Check]) -> list[tuple[str, bool]]:
    """Tree directories the Python checks import from: their working directories (added
    after start-up, so only their metadata matters) and their PYTHONPATH (read at start-up)."""
    dirs: list[tuple[str, bool]] = []
    for check in checks:
        if not uses_python(check):
            continue
        cwd = os.path.normpath(str(places.workspace / check.cwd))
        dirs.append((cwd, False))
        for entry in check.env.get("PYTHONPATH", "").split(os.pathsep):
            if entry:
                path = os.path.normpath(os.path.join(cwd, entry))
                if places.inside(path):
                    dirs.append((path, True))
    return dirs


def _scan_import_dir(
    places: _Places, directory: str, at_startup: bool, declared: Declared, found: _Findings
) -> None:
    """A tree directory on the import path holds no start-up module (if it is there at
    start-up) and no metadata declaring entry points a runner loads by itself, but those
    the base's manifests declare for the project itself: building a setuptools project
    writes its `.egg-info` into the tree, and a pytest plugin's declares the plugin."""
    located = _tree_of(places, directory)
    if located is None:
        return
    root, rel = located
    if rel:
        reached = places.locate(rel) if root == places.workspace else located
        if isinstance(reached, str):
            found.add(rel, reached)
            return
        root, rel = reached
    names = list_untrusted(root, rel) if rel else _list_root(root)
    for name in names if isinstance(names, list) else ():
        path = f"{rel}/{name}" if rel else name
        if at_startup and name.split(".", 1)[0] in STARTUP_MODULES:
            found.add(path, "a start-up module on the import path: imported at every start")
        elif at_startup and name.startswith(FINDER_PREFIX):
            # Imported by name from an editable install's `.pth`: here, it would be found first.
            found.add(path, "a module named as an editable install's finder on the import path")
        elif name.endswith((".dist-info", ".egg-info")):
            data = read_untrusted(root, f"{path}/entry_points.txt", limit=METADATA_MAX_BYTES)
            if isinstance(data, Refused) or (
                isinstance(data, bytes)
                and (loaded := autoloaded_entry_points(data))
                and not _projects_own(name, loaded, declared)
            ):
                found.add(
                    path,
                    "metadata on the import path declaring plugins a runner loads by itself, "
                    "or under the names of the plugins assay asks for",
                )


def _projects_own(
    metadata: str, loaded: dict[str, list[tuple[str, str]]], declared: Declared
) -> bool:
    """Whether a metadata directory (`pytest_timeout.egg-info`,
    `pytest_mock-3.14.0.dist-info`) is named for the project the base's manifests define,
    and every entry point it has a runner load is one they declare for it."""
    name = metadata.rsplit(".", 1)[0].split("-", 1)[0]
    points = {entry_point(g, n, v) for g, listed in loaded.items() for n, v in listed}
    return normalise(name) in declared.projects and points <= declared.entry_points


def _tree_of(places: _Places, directory: str) -> tuple[Path, str] | None:
    """(tree root, relative path) of an absolute directory in the workspace or its source."""
    for root in (places.workspace, places.source):
        if root is None:
            continue
        for form in {str(root), os.path.realpath(root)}:
            if directory == form:
                return root, ""
            if directory.startswith(form.rstrip("/") + "/"):
                return root, directory[len(form.rstrip("/")) + 1 :]
    return None


def _list_root(root: Path) -> list[str] | None:
    try:
        return sorted(os.listdir(root))
    except OSError:
        return None


# --------------------------------------------------------------------------- node_modules


def _node_modules(places: _Places, checks: Sequence[Check]) -> Iterator[str]:
    """`node_modules` directories the node checks resolve from: the root's, each check's
    directory's, and those the workspace links to."""
    candidates = ["node_modules"]
    candidates += [f"{c.cwd.strip('/')}/node_modules" for c in checks if c.cwd not in ("", ".")]
    candidates += [rel for rel in places.linked if rel.rsplit("/", 1)[-1] == "node_modules"]
    for rel in dict.fromkeys(candidates):
        located = places.locate(rel)
        if isinstance(located, str) or list_untrusted(*located) is not None:
            yield rel
