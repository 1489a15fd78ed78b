"""Building fixture repositories on disk: files from a mapping, and git commits of them."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Mapping
from pathlib import Path

#: Who commits in a fixture repository, so that no test depends on the machine's git identity.
GIT_IDENTITY = (
    "-c",
    "user.email=t@example.com",
    "-c",
    "user.name=t",
    "-c",
    "commit.gpgsign=false",
)

#: The smallest Python project whose pytest suite passes.
PASSING_PYTEST: Mapping[str, str] = {
    "pyproject.toml": "[tool.pytest.ini_options]\n",
    "tests/test_a.py": "def test_a():\n    assert 1 + 1 == 2\n",
}


def write(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """Write each `relative path -> content` under `root` (text or bytes, as given)."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


def workflow(*steps: str) -> str:
    """A GitHub Actions workflow whose one job checks the tree out and runs `steps`."""
    runs = "".join(f"      - run: {step}\n" for step in steps)
    return (
        "on: push\njobs:\n  checks:\n    runs-on: ubuntu-latest\n"
        f"    steps:\n      - uses: actions/checkout@v4\n{runs}"
    )


def write_dedented(root: Path, files: Mapping[str, str]) -> Path:
    """`write`, with each text dedented and its leading newline dropped: for files written as
    indented triple-quoted strings in a test."""
    return write(root, {rel: textwrap.dedent(text).lstrip("\n") for rel, text in files.items()})


def git(
    repo: Path, *args: str, stdin: bytes | None = None, env: Mapping[str, str] | None = None
) -> bytes:
    """Run git in `repo` as the fixture identity; its stdout. A failing git fails the test."""
    done = subprocess.run(
        ["git", "-C", str(repo), *GIT_IDENTITY, *args],
        input=stdin,
        env=None if env is None else dict(env),
        capture_output=True,
        check=True,
    )
    return done.stdout


def commit_all(repo: Path, message: str = "base") -> Path:
    """Make `repo` a git repository (if it is not one) and commit everything in it."""
    if not (repo / ".git").exists():
        git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    return repo


def git_repo(root: Path, files: Mapping[str, str | bytes], message: str = "base") -> Path:
    """A git repository whose one commit holds `files`."""
    return commit_all(write(root, files), message)


def tree_with_venv(prefix: str, *requirements: str) -> Path:
    """A new tree whose own `.venv` has `requirements` installed from PyPI (a venv is not
    relocatable: it is made in place), where a user's tree would be: the sandbox's user
    may reach it (pytest's own temporary directories are its owner's alone). The caller
    removes it."""
    repo = Path(tempfile.mkdtemp(prefix=prefix))
    repo.chmod(0o755)
    venv = repo / ".venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [venv / "bin" / "python", "-m", "pip", "install", "-q", *requirements],
        check=True,
        timeout=300,
    )
    return repo
