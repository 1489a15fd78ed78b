"""The project's own environment: its in-tree virtualenv, node_modules/.bin, package manager.

A workspace an agent works in is usually set up already; planned commands use
the project's interpreter and tools rather than whatever is first on PATH, and
the plan records which was chosen.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

from assay.discovery.files import RepoFiles, UnreadableFile
from assay.discovery.model import ProjectEnv
from assay.discovery.pre_commit_hooks import HOOKS
from assay.tools import NODE_BIN_WORDS, VENV_TOOL_WORDS, Ecosystem, ecosystem_spec

#: In-tree virtualenv directory names, most conventional first (uv, poetry with
#: virtualenvs.in-project, hatch and pdm all default to `.venv` when in-tree).
VENV_NAMES = (".venv", "venv", "env", ".env", "virtualenv")

#: Node executables assay plans directly, looked up in node_modules/.bin.
NODE_TOOLS = tuple(sorted(NODE_BIN_WORDS))

#: Python tools looked up in the virtualenv's bin directory.
PYTHON_TOOLS = tuple(sorted(VENV_TOOL_WORDS))

#: Python programs looked up in every environment the project keeps (its virtualenvs, tox's):
#: the declared tools, the Python checks whose output is read generically (flake8, pylint),
#: and the tools of the pre-commit hooks CI runs (isort: else the one on PATH, of another
#: release than the hook's pin `--install` put in `.venv`, was found and the hook left out).
ENVIRONMENT_TOOLS = tuple(
    sorted(
        VENV_TOOL_WORDS
        | {w for c in ecosystem_spec(Ecosystem.PYTHON).generic_commands for w in c.words}
        | {hook.executable for hook in HOOKS.values()}
    )
)

#: Where tox keeps its environments, and the most of them looked at.
TOX_WORKDIR = ".tox"
MAX_TOX_ENVS = 50

#: Lockfiles, in the order they decide the package manager.
LOCKFILES = (
    ("pnpm-lock.yaml", "pnpm"),
    ("yarn.lock", "yarn"),
    ("bun.lockb", "bun"),
    ("bun.lock", "bun"),
    ("package-lock.json", "npm"),
    ("npm-shrinkwrap.json", "npm"),
)

_PACKAGE_MANAGER_FIELD = re.compile(r"^(npm|pnpm|yarn|bun)@")

PATH_PYTHON = "python3"


def detect_env(files: RepoFiles) -> ProjectEnv:
    """Look for the project's interpreter and tools at known paths (never a walk)."""
    notes: list[str] = []
    venvs = tuple(name for name in VENV_NAMES if _is_venv(files, name))
    python, python_source = PATH_PYTHON, "PATH"
    venv_tools: frozenset[str] = frozenset()
    for name in venvs:
        if files.lexists(f"{name}/bin/python"):
            python, python_source = f"{name}/bin/python", f"in-tree virtualenv {name}"
            venv_tools = frozenset(t for t in PYTHON_TOOLS if files.lexists(f"{name}/bin/{t}"))
            break
    else:
        pdm = _pdm_python(files)
        if pdm:
            python, python_source = pdm, ".pdm-python"
    if python_source == "PATH" and files.is_file("poetry.lock") and not venvs:
        notes.append(
            "poetry project without an in-tree virtualenv: planned commands use python3 from PATH "
            "(`poetry config virtualenvs.in-project true && poetry install` puts one in .venv)"
        )
    tool_paths = environment_tools(files, venvs)
    node_bin = "node_modules/.bin" if files.is_dir("node_modules/.bin") else None
    node_tools = frozenset(t for t in NODE_TOOLS if node_bin and files.lexists(f"{node_bin}/{t}"))
    manifest = _package_json(files)
    manager, manager_source = package_manager(manifest, files.list_dir("."))
    return ProjectEnv(
        python=python,
        python_source=python_source,
        venv_dirs=venvs,
        venv_tools=venv_tools,
        tool_paths=tool_paths,
        node_bin=node_bin,
        node_tools=node_tools,
        package_manager=manager,
        package_manager_source=manager_source,
        package_scripts=_scripts(manifest),
        hatch_scripts=_hatch_scripts(files),
        golangci_runs_govet=_golangci_runs_govet(files),
        notes=tuple(notes),
    )


def _scripts(manifest: object) -> dict[str, str]:
    """package.json's `scripts`: the ones whose name and body are strings."""
    scripts = manifest.get("scripts") if isinstance(manifest, dict) else None
    if not isinstance(scripts, dict):
        return {}
    return {k: v for k, v in scripts.items() if isinstance(k, str) and isinstance(v, str)}


def _hatch_scripts(files: RepoFiles) -> dict[str, dict[str, tuple[str, ...]]]:
    from assay.discovery.hatch_scripts import HATCH_TOML, read_scripts

    texts: list[str | None] = []
    for rel in ("pyproject.toml", HATCH_TOML):
        try:
            texts.append(files.read_text(rel))
        except UnreadableFile:
            texts.append(None)  # the Python detectors report the problem
    pyproject, hatch_toml = texts
    if not (pyproject and "hatch" in pyproject) and not hatch_toml:
        return {}
    return read_scripts(pyproject or "", hatch_toml)


def _golangci_runs_govet(files: RepoFiles) -> bool:
    """Whether the project's golangci-lint configuration, if any, leaves govet on."""
    from assay.discovery.workflow_actions import GOLANGCI_CONFIGS, govet_turned_off

    for path in GOLANGCI_CONFIGS:
        try:
            text = files.read_text(path)
        except UnreadableFile:
            continue
        if text is not None:
            from assay.discovery.text import load_yaml

            return not govet_turned_off(load_yaml(text, path)[0])
    return True


def with_installed(env: ProjectEnv, installed: RepoFiles) -> ProjectEnv:
    """`env` (read from a tree that has no installed environment: the base commit's export)
    with the interpreter and tools installed in `installed`'s tree. The package manager
    stays `env`'s: it comes from the manifests and lockfiles, which the plan reads there."""
    found = detect_env(installed)
    return replace(
        found,
        package_manager=env.package_manager,
        package_manager_source=env.package_manager_source,
        tree=installed.root,
    )


def environment_tools(files: RepoFiles, venvs: tuple[str, ...]) -> dict[str, str]:
    """Each Python tool's executable in the project's environments: its virtualenvs first
    (in VENV_NAMES order), then tox's `.tox/<env>/bin` (by name), the first found winning."""
    bins = [f"{v}/bin" for v in venvs]
    bins += [
        f"{TOX_WORKDIR}/{name}/bin"
        for name in files.list_dir(TOX_WORKDIR)[:MAX_TOX_ENVS]
        if not name.startswith(".") and files.is_file(f"{TOX_WORKDIR}/{name}/pyvenv.cfg")
    ]
    found: dict[str, str] = {}
    for directory in bins:
        for tool in ENVIRONMENT_TOOLS:
            if tool not in found and files.lexists(f"{directory}/{tool}"):
                found[tool] = f"{directory}/{tool}"
    return found


def package_manager(package_json: object, root_names: list[str]) -> tuple[str, str]:
    """npm, pnpm, yarn or bun: the `packageManager` field first, then lockfiles, else npm."""
    if isinstance(package_json, dict):
        declared = package_json.get("packageManager")
        if isinstance(declared, str):
            match = _PACKAGE_MANAGER_FIELD.match(declared)
            if match:
                return match.group(1), "package.json packageManager"
    present = set(root_names)
    for lockfile, manager in LOCKFILES:
        if lockfile in present:
            return manager, lockfile
    return "npm", "default"


def _is_venv(files: RepoFiles, name: str) -> bool:
    # pyvenv.cfg marks a virtualenv; a `.env` dotenv file is not one.
    return files.is_dir(name) and files.is_file(f"{name}/pyvenv.cfg")


def _pdm_python(files: RepoFiles) -> str | None:
    """The interpreter pdm recorded for this project, when it lives inside the tree."""
    try:
        text = files.read_text(".pdm-python")
    except UnreadableFile:
        return None
    if not text or not text.strip():
        return None
    path = text.strip().splitlines()[0]
    prefix = files.root + "/"
    if path.startswith(prefix) and files.lexists(path[len(prefix) :]):
        return path[len(prefix) :]
    return None


def _package_json(files: RepoFiles) -> object:
    try:
        text = files.read_text("package.json")
        return json.loads(text) if text else None
    except (UnreadableFile, ValueError, RecursionError):
        return None  # the node detector reports the problem
