"""Install steps for a fresh clone (`assay verify --install`): what each ecosystem runs to get
its dependencies, read from the repository's files, never guessed from the network.

Pure apart from looking at which files exist: the steps are `Check`s that
`verify` runs in the sandbox, with the network on for these steps only.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from assay.evidence import Check
from assay.untrusted_files import read_untrusted
from assay.verdict import Kind

#: Deadline for one install step: downloading dependencies is slow, but not unbounded.
INSTALL_TIMEOUT_S = 900.0
#: Extras of a Python project that usually hold its test and lint tools.
PYTHON_TEST_EXTRAS = ("test", "tests", "testing", "dev")
#: Requirement files installed when present, in this order.
PYTHON_REQUIREMENT_FILES = ("requirements.txt", "requirements-dev.txt", "requirements-test.txt")
_IN_TREE_VENVS = (".venv", "venv")
#: The largest pyproject.toml read for its extras (as discovery reads configs).
PYPROJECT_MAX_BYTES = 4 * 1024 * 1024
#: Lockfile -> the package manager's reproducible install command.
_NODE_INSTALLS = (
    ("pnpm-lock.yaml", ("pnpm", "install", "--frozen-lockfile")),
    ("yarn.lock", ("yarn", "install", "--frozen-lockfile")),
    ("package-lock.json", ("npm", "ci")),
)


def install_steps(root: Path) -> list[Check]:
    """The install steps for the project at `root`, in order; empty when nothing is needed."""
    return [*_python_steps(root), *_node_steps(root), *_go_steps(root), *_rust_steps(root)]


def _step(
    name: str, argv: tuple[str, ...], source: str, reason: str, tool: str | None = None
) -> Check:
    return Check(
        name=f"install-{name}",
        kind=Kind.BUILD,
        argv=argv,
        timeout_s=INSTALL_TIMEOUT_S,
        tool=tool,
        source=source,
        reason=reason,
    )


def _python_steps(root: Path) -> list[Check]:
    manifest = next(
        (n for n in ("pyproject.toml", "setup.py", "setup.cfg") if (root / n).is_file()), None
    )
    requirements = [n for n in PYTHON_REQUIREMENT_FILES if (root / n).is_file()]
    if manifest is None and not requirements:
        return []
    if any((root / v / "bin" / "python").exists() for v in _IN_TREE_VENVS):
        return []  # the project's environment exists: use it as it is
    steps = [
        _step(
            "venv",
            ("python3", "-m", "venv", ".venv"),
            manifest or requirements[0],
            "a project-local environment, so the project's tools are the ones that run",
            tool="python",
        )
    ]
    pip = (".venv/bin/python", "-m", "pip", "install", "-q")
    if manifest is not None:
        target = "." + _extras(root)
        steps.append(
            _step("python", (*pip, "-e", target), manifest, "the project and its test extras")
        )
    for name in requirements:
        steps.append(
            _step(f"python-{Path(name).stem}", (*pip, "-r", name), name, f"{name} is present")
        )
    return steps


def _extras(root: Path) -> str:
    """`[test,dev]` for the extras the project declares among PYTHON_TEST_EXTRAS."""
    # The workspace's file, read as one we do not trust: no link, FIFO or endless file.
    data = read_untrusted(root, "pyproject.toml", limit=PYPROJECT_MAX_BYTES)
    if not isinstance(data, bytes):
        return ""
    try:
        declared = tomllib.loads(data.decode("utf-8"))["project"]["optional-dependencies"]
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError, KeyError, TypeError):
        return ""
    wanted = [e for e in PYTHON_TEST_EXTRAS if isinstance(declared, dict) and e in declared]
    return f"[{','.join(wanted)}]" if wanted else ""


def _node_steps(root: Path) -> list[Check]:
    if not (root / "package.json").is_file() or (root / "node_modules").is_dir():
        return []
    for lockfile, argv in _NODE_INSTALLS:
        if (root / lockfile).is_file():
            return [_step("node", argv, lockfile, f"{lockfile} pins the dependencies")]
    return [
        _step("node", ("npm", "install"), "package.json", "no lockfile: npm resolves the ranges")
    ]


def _go_steps(root: Path) -> list[Check]:
    if not (root / "go.mod").is_file():
        return []
    return [_step("go", ("go", "mod", "download"), "go.mod", "module dependencies", tool="go")]


def _rust_steps(root: Path) -> list[Check]:
    if not (root / "Cargo.toml").is_file():
        return []
    return [_step("rust", ("cargo", "fetch"), "Cargo.toml", "crate dependencies", tool="cargo")]
