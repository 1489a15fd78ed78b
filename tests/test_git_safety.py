"""Git on the host runs nothing a repository names, and reads a commit's bytes as they are.

Every repository here is armed for real: its `.git/config` names filter drivers, a
textconv and external diff, an fsmonitor and a hooks directory whose programs append to
a marker file outside the repository, and `.gitattributes` routes every file through
them. assay's host-side git use (`export_commit`, `resolve_commit`, the verdict cache's
listing, and `assay verify --base ... --protect`) must leave the marker unwritten.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

import pytest

from assay.cache import workspace_digest
from assay.sandbox import provision
from assay.sandbox.provision import CopyFailed, export_commit, resolve_commit
from tests.cli import ASSAY, path_with_venv

#: The test's own git: no user or system configuration, so the fixtures are what they say.
GIT_ENV = {
    **os.environ,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}

PY_CODE = b"def add(a, b):\n    return a + b\n"
PY_TEST = b"from fx import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
PYPROJECT = (
    b'[project]\nname = "fx"\nversion = "0.1.0"\n\n'
    b'[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
)

#: Committed before any attribute exists, so the blobs hold exactly these bytes.
FILES: dict[str, bytes] = {
    "crlf.txt": b"one\r\ntwo\r\n",
    "lf.txt": b"one\ntwo\n",
    "ident.txt": b"id: $Id$\n",
    "subst.txt": b"commit $Format:%H$\n",
    "run.sh": b"#!/bin/sh\necho ran\n",
    "fx.py": PY_CODE,
    "tests/test_fx.py": PY_TEST,
    "pyproject.toml": PYPROJECT,
}
#: Every conversion git archive or a checkout would apply, on every file.
ATTRIBUTES = (
    b"* filter=evil diff=evil\n"
    b"*.txt text eol=crlf ident\n"
    b"subst.txt export-subst\n"
    b"run.sh filter=evilproc\n"
)
HOOKS = (
    "post-checkout",
    "post-index-change",
    "reference-transaction",
    "pre-auto-gc",
    "post-rewrite",
    "fsmonitor-watchman",
)


def git(repo: Path, *args: str, stdin: bytes | None = None) -> bytes:
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        input=stdin,
        env=GIT_ENV,
        capture_output=True,
        check=True,
    )
    return done.stdout


def program(path: Path, marker: Path, name: str, body: str = "exec cat") -> str:
    """A program that records that it ran, then does `body`."""
    path.write_text(f"#!/bin/sh\necho {name} >> '{marker}'\n{body}\n")
    path.chmod(0o755)
    return str(path)


def arm(repo: Path, tmp_path: Path, marker: Path) -> None:
    """Make the repository's own configuration name a program for every way git can run one."""
    bin_dir = tmp_path / "evil-bin"
    bin_dir.mkdir(exist_ok=True)

    def evil(name: str, body: str = "exec cat") -> str:
        return program(bin_dir / name, marker, name, body)

    git(repo, "config", "filter.evil.smudge", evil("smudge"))
    git(repo, "config", "filter.evil.clean", evil("clean"))
    git(repo, "config", "filter.evil.required", "true")
    git(repo, "config", "filter.evilproc.process", evil("process", "exit 1"))
    git(repo, "config", "diff.evil.textconv", evil("textconv"))
    git(repo, "config", "diff.external", evil("external-diff"))
    git(repo, "config", "core.fsmonitor", evil("fsmonitor", "exit 1"))
    hooks = tmp_path / "evil-hooks"
    hooks.mkdir(exist_ok=True)
    for hook in HOOKS:
        program(hooks / hook, marker, hook, "exit 0")
    git(repo, "config", "core.hooksPath", str(hooks))


def committed_repo(tmp_path: Path) -> Path:
    """A repository whose HEAD holds `FILES`, an executable, an outward symlink and
    `ATTRIBUTES`, with the blobs' bytes exactly as written."""
    repo = tmp_path / "repo"
    for rel, data in FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_bytes(data)
    (repo / "run.sh").chmod(0o755)
    (tmp_path / "secret").write_text("host secret\n")
    (repo / "outside").symlink_to(tmp_path / "secret")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "files")
    (repo / ".gitattributes").write_bytes(ATTRIBUTES)
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-qm", "attributes")
    return repo


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "pwned"


@pytest.fixture
def armed(tmp_path: Path, marker: Path) -> Path:
    repo = committed_repo(tmp_path)
    arm(repo, tmp_path, marker)
    return repo


def ran(marker: Path) -> list[str]:
    return marker.read_text().split() if marker.exists() else []


def assert_is_head(out: Path, tmp_path: Path) -> None:
    """`out` holds HEAD's blobs byte for byte: no eol, ident, export-subst or filter."""
    for rel, data in {**FILES, ".gitattributes": ATTRIBUTES}.items():
        assert (out / rel).read_bytes() == data, rel
    assert (out / "run.sh").stat().st_mode & 0o111 == 0o111
    assert not (out / "fx.py").stat().st_mode & 0o111
    link = out / "outside"
    assert link.is_symlink() and os.readlink(link) == str(tmp_path / "secret")
    assert (tmp_path / "secret").read_text() == "host secret\n"
    assert not os.path.lexists(out / ".git")


# --------------------------------------------------------------------------- the host side


def test_no_host_side_git_use_runs_what_the_repository_names(
    armed: Path, marker: Path, tmp_path: Path
) -> None:
    head = resolve_commit(armed, "HEAD")
    assert export_commit(armed, "HEAD", tmp_path / "out") == head
    workspace_digest(armed)
    assert ran(marker) == []
    assert_is_head(tmp_path / "out", tmp_path)


def test_export_is_the_blobs_bytes_whatever_the_attributes(tmp_path: Path) -> None:
    repo = committed_repo(tmp_path)  # attributes only, nothing armed: conversions alone
    export_commit(repo, "HEAD", tmp_path / "out")
    assert_is_head(tmp_path / "out", tmp_path)


def test_export_reads_the_commit_not_a_replacement(tmp_path: Path) -> None:
    """A replace ref planted by the change cannot rewrite the base's tests."""
    repo = committed_repo(tmp_path)
    real = git(repo, "rev-parse", "HEAD:tests/test_fx.py").decode().strip()
    weak = git(repo, "hash-object", "-w", "--stdin", stdin=b"def test_add():\n    pass\n")
    git(repo, "replace", real, weak.decode().strip())
    export_commit(repo, "HEAD", tmp_path / "out")
    assert (tmp_path / "out" / "tests" / "test_fx.py").read_bytes() == PY_TEST


@pytest.mark.slow
@pytest.mark.parametrize("how", ["ext-url", "upload-pack"])
def test_a_missing_object_is_never_fetched(how: str, tmp_path: Path, marker: Path) -> None:
    """A partial clone fetches a missing object from its promisor remote on its own; the
    remote's transport is a program the repository names."""
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    (upstream / "a.txt").write_text("hello\n")
    git(upstream, "init", "-q")
    git(upstream, "add", "-A")
    git(upstream, "commit", "-qm", "one")
    git(upstream, "config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "-q", "--no-checkout", "--filter=blob:none", f"file://{upstream}", clone],
        env=GIT_ENV,
        check=True,
    )
    if how == "ext-url":
        git(clone, "config", "remote.origin.url", f"ext::sh -c touch% {marker}")
        git(clone, "config", "protocol.ext.allow", "always")
    else:
        pack = program(tmp_path / "upload-pack", marker, "upload-pack", 'exec git-upload-pack "$@"')
        git(clone, "config", "remote.origin.uploadpack", pack)
        git(clone, "config", "protocol.file.allow", "always")
    with pytest.raises(CopyFailed, match="fetch|not allowed|missing"):
        export_commit(clone, "HEAD", tmp_path / "out")
    assert not marker.exists()


def test_cache_listing_reads_no_excludes_file_the_repository_names(
    armed: Path, tmp_path: Path, marker: Path
) -> None:
    """The repository's config may not make git read a host file, and an excludes file it
    names may not hide an untracked file from the cache key."""
    host_file = tmp_path / "host-ignore"
    host_file.write_text("hidden.py\n")
    git(armed, "config", "core.excludesFile", str(host_file))
    (armed / "hidden.py").write_text("x = 1\n")
    before = workspace_digest(armed)
    (armed / "hidden.py").write_text("x = 2\n")
    assert workspace_digest(armed) != before
    assert ran(marker) == []


def test_resolve_commit_refuses_what_is_not_a_commit(armed: Path, marker: Path) -> None:
    with pytest.raises(CopyFailed):
        resolve_commit(armed, "no-such-ref")
    with pytest.raises(CopyFailed):
        resolve_commit(armed, "--git-dir")
    with pytest.raises(CopyFailed):
        resolve_commit(armed, "HEAD:fx.py")  # a blob
    assert ran(marker) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a repository to another user needs root")
def test_a_repository_of_another_user_is_read_only_when_the_user_vouched_for_it(
    armed: Path, tmp_path: Path, marker: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No global configuration is read, but the user's own `safe.directory` (a CI job whose
    checkout another uid owns) still counts, and the repository's drivers are still emptied."""
    for path in [armed, *armed.rglob("*")]:
        os.lchown(path, 65534, 65534)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    with pytest.raises(CopyFailed, match="dubious ownership"):
        export_commit(armed, "HEAD", tmp_path / "refused")
    (home / ".gitconfig").write_text(f"[safe]\n\tdirectory = {armed}\n")
    export_commit(armed, "HEAD", tmp_path / "out")
    assert ran(marker) == []
    assert_is_head(tmp_path / "out", tmp_path)


# --------------------------------------------------------------------------- hostile trees


def crafted_commit(repo: Path, entries: list[tuple[str, bytes, str]]) -> str:
    """A commit whose root tree holds `entries` (mode, name, oid) verbatim: trees git's
    own commands refuse to make, written with `hash-object --literally`."""
    body = b"".join(
        mode.encode() + b" " + name + b"\0" + bytes.fromhex(oid) for mode, name, oid in entries
    )
    tree = git(repo, "hash-object", "-t", "tree", "-w", "--literally", "--stdin", stdin=body)
    commit = git(repo, "commit-tree", tree.decode().strip(), "-m", "crafted")
    return commit.decode().strip()


def blob(repo: Path, data: bytes) -> str:
    return git(repo, "hash-object", "-w", "--stdin", stdin=data).decode().strip()


def test_a_file_under_a_symlink_is_refused_not_written_through_it(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    inner = crafted_commit(repo, [("100644", b"x", blob(repo, b"written through\n"))])
    inner_tree = git(repo, "rev-parse", f"{inner}^{{tree}}").decode().strip()
    commit = crafted_commit(
        repo, [("120000", b"a", blob(repo, str(elsewhere).encode())), ("40000", b"a", inner_tree)]
    )
    with pytest.raises(CopyFailed):
        export_commit(repo, commit, tmp_path / "out")
    assert list(elsewhere.iterdir()) == []


@pytest.mark.slow
@pytest.mark.parametrize("name", [b"..", b".git", b".GIT", b"."])
def test_a_path_leaving_the_tree_or_into_git_state_is_refused(name: bytes, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    inner = crafted_commit(repo, [("100644", b"config", blob(repo, b"[core]\n"))])
    inner_tree = git(repo, "rev-parse", f"{inner}^{{tree}}").decode().strip()
    commit = crafted_commit(repo, [("40000", name, inner_tree)])
    out = tmp_path / "nest" / "out"
    with pytest.raises(CopyFailed):
        export_commit(repo, commit, out)
    assert not (tmp_path / "nest" / "config").exists()
    assert not (out / ".git").exists() and not (out / ".GIT").exists()


def test_a_submodule_becomes_an_empty_directory(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    commit = crafted_commit(
        repo,
        [("100644", b"a.txt", blob(repo, b"a\n")), ("160000", b"sub", "1" * 40)],
    )
    export_commit(repo, commit, tmp_path / "out")
    assert (tmp_path / "out" / "a.txt").read_bytes() == b"a\n"
    assert (tmp_path / "out" / "sub").is_dir() and not any((tmp_path / "out" / "sub").iterdir())


def test_a_symlink_too_long_to_be_one_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    commit = crafted_commit(repo, [("120000", b"link", blob(repo, b"x" * 100_000))])
    with pytest.raises(CopyFailed, match="over"):
        export_commit(repo, commit, tmp_path / "out")


@pytest.mark.slow
def test_a_git_that_hangs_is_killed_at_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A config include that names a FIFO blocks git forever: the export ends at its
    deadline with a clear error, and no git is left behind."""
    repo = committed_repo(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    git(repo, "config", "include.path", str(fifo))
    monkeypatch.setattr(provision, "COPY_TIMEOUT_SECONDS", 1.0)
    started = time.monotonic()
    with pytest.raises(CopyFailed, match="timed out"):
        export_commit(repo, "HEAD", tmp_path / "out")
    assert time.monotonic() - started < 10
    left = subprocess.run(["pgrep", "-f", str(repo)], capture_output=True, text=True, check=False)
    assert left.stdout == ""


# --------------------------------------------------------------------------- end to end


@pytest.mark.slow
def test_verify_with_a_base_runs_nothing_the_repository_names(
    armed: Path, marker: Path, tmp_path: Path
) -> None:
    assert shutil.which("bwrap"), "bubblewrap is required for this test"
    env = {
        **os.environ,
        "ASSAY_CACHE_DIR": str(tmp_path / "cache"),
        "PATH": path_with_venv(),
    }
    done = subprocess.run(
        [ASSAY, "verify", str(armed), "--base", "HEAD", "--protect", "--sandbox", "bwrap"]
        + ["--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert ran(marker) == [], done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    report = json.loads(done.stdout)
    assert (report["status"], done.returncode) == ("VERIFIED", 0), report["note"]
    # The repository itself is untouched: no file of the change was rewritten by a filter.
    assert (armed / "crlf.txt").read_bytes() == FILES["crlf.txt"]
    assert stat.S_ISLNK(os.lstat(armed / "outside").st_mode)
