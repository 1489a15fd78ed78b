"""A base read from an object store the change could write: each object is hashed again.

git serves a loose object rewritten in place under its old name, unchecked, through
`cat-file`, `ls-tree` and `rev-parse` alike. The object store is in the working tree's
`.git`: an agent that broke `add`, weakened its test, and rewrote the base's blob of that
test to the weakened bytes had its stop through `--protect` (and `verify --base <commit>
--protect` VERIFIED), the base's test as weak as its own.
"""

from __future__ import annotations

import subprocess
import zlib
from pathlib import Path

import pytest

from assay.sandbox.provision import CopyFailed, export_commit
from tests.repos import git_repo
from tests.test_hook_claude_code import hook, output, stop_event
from tests.test_hook_protect import BROKEN, PROJECT, WEAKENED, prompt

REWRITTEN = "the repository's object store was rewritten"


def git(project: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(project), *args], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def rewrite_object(project: Path, oid: str, kind: str, data: bytes) -> None:
    """Put `data` in the loose object file of `oid`, as anyone who can write `.git` can."""
    path = project / ".git" / "objects" / oid[:2] / oid[2:]
    path.unlink(missing_ok=True)
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(zlib.compress(kind.encode() + b" %d\0" % len(data) + data))


def recorded_base(state: Path) -> str:
    import json

    (record,) = (state / "hooks").glob("base-*.json")
    return str(json.loads(record.read_text())["commit"])


def test_a_stop_whose_base_test_was_rewritten_in_the_object_store_is_blocked(
    tmp_path: Path,
) -> None:
    project = git_repo(tmp_path / "p", PROJECT)
    state = tmp_path / "state"
    prompt(project, state)
    base = recorded_base(state)
    (project / "calc.py").write_text(BROKEN)
    (project / "test_calc.py").write_text(WEAKENED)
    old = git(project, "rev-parse", f"{base}:test_calc.py")
    rewrite_object(project, old, "blob", WEAKENED.encode())
    assert git(project, "cat-file", "blob", old) == WEAKENED.strip()  # git believes it

    said = output(hook(stop_event(project), state, "--protect"))
    assert said["decision"] == "block"
    assert REWRITTEN in said["reason"]


@pytest.fixture(scope="module")
def monorepo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    files = {f"pkg/{name}": text for name, text in PROJECT.items()}
    return git_repo(tmp_path_factory.mktemp("mono") / "repo", {**files, "README": "x\n"})


def test_an_honest_base_of_a_package_in_a_subdirectory_is_read_whole(
    monorepo: Path, tmp_path: Path
) -> None:
    head = git(monorepo, "rev-parse", "HEAD")
    assert export_commit(monorepo / "pkg", "HEAD", tmp_path / "out") == head
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(PROJECT)
    assert (tmp_path / "out" / "test_calc.py").read_text() == PROJECT["test_calc.py"]


def test_a_rewritten_tree_on_the_way_to_the_package_is_refused(
    tmp_path: Path,
) -> None:
    files = {f"pkg/{name}": text for name, text in PROJECT.items()}
    repo = git_repo(tmp_path / "repo", files)
    weak = subprocess.run(
        ["git", "-C", str(repo), "hash-object", "-w", "--stdin"],
        input=WEAKENED,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    pkg = git(repo, "rev-parse", "HEAD:pkg")
    raw = subprocess.run(
        ["git", "-C", str(repo), "cat-file", "tree", pkg], capture_output=True, check=True
    ).stdout
    honest = git(repo, "rev-parse", "HEAD:pkg/test_calc.py")
    rewrite_object(repo, pkg, "tree", raw.replace(bytes.fromhex(honest), bytes.fromhex(weak)))
    assert git(repo, "show", "HEAD:pkg/test_calc.py") == WEAKENED.strip()  # git believes it

    with pytest.raises(CopyFailed, match=REWRITTEN):
        export_commit(repo / "pkg", "HEAD", tmp_path / "out")
