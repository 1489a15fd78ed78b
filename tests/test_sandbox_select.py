"""Choosing a backend, the local and none backends, and the lifecycle's failure reporting."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from assay import sandbox as sandbox_pkg
from assay.sandbox import (
    BwrapSandbox,
    CleanupError,
    LocalSandbox,
    NoSandbox,
    ProvisionError,
    SandboxUnavailable,
    select_sandbox,
)

PYTHON = sys.executable


@pytest.fixture
def source(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.txt").write_text("original")
    (src / ".hidden").write_text("dot")
    (src / "link").symlink_to("a.txt")
    return src


def test_names_map_to_backends() -> None:
    assert isinstance(select_sandbox("auto"), BwrapSandbox)
    assert isinstance(select_sandbox("bwrap"), BwrapSandbox)
    assert isinstance(select_sandbox("local"), LocalSandbox)
    assert isinstance(select_sandbox("none"), NoSandbox)
    with pytest.raises(ValueError):
        select_sandbox("docker")


def test_public_names_are_exported() -> None:
    for name in sandbox_pkg.__all__:
        assert hasattr(sandbox_pkg, name), name


def test_auto_with_a_broken_bwrap_refuses_and_says_how_to_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: Path
) -> None:
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    fake = fake_bin / "bwrap"
    # Answers --version like the real one, then fails the way a blocked user namespace does.
    fake.write_text(
        '#!/bin/sh\n[ "$1" = --version ] && { echo "bubblewrap 0.8.0"; exit 0; }\n'
        'echo "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n'
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake_bin}{os.pathsep}{os.environ['PATH']}")
    chosen = select_sandbox("auto")
    with pytest.raises(SandboxUnavailable) as info:
        chosen.ensure_available()
    assert "Permission denied" in str(info.value)
    assert "apt-get install bubblewrap" in info.value.note
    assert "--sandbox local" in info.value.note
    # Nothing runs: no workspace is made, no runner is handed out, nothing downgrades.
    with pytest.raises(SandboxUnavailable):
        chosen.provision(source)
    with pytest.raises(SandboxUnavailable):
        chosen.describe()


def test_auto_without_bwrap_on_path_is_unavailable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SandboxUnavailable, match="not found"):
        select_sandbox("auto").ensure_available()


def test_local_runs_in_a_copy_with_pinned_home_and_scrubbed_env(
    source: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SERVICE_API_TOKEN", "planted")
    sandbox = LocalSandbox()
    with sandbox.workspace(source) as ws:
        assert ws.path != source
        assert (ws.path / ".hidden").read_text() == "dot"
        assert (ws.path / "link").is_symlink()
        code = (
            "import json, os; open('a.txt', 'w').write('changed');"
            "print(json.dumps({'home': os.environ['HOME'], 'token': os.environ.get('SERVICE_API_TOKEN')}))"
        )
        result = sandbox.run(ws, [PYTHON, "-c", code], timeout=30)
        got = json.loads(result.stdout.text)
        assert got["token"] is None
        assert got["home"] != os.environ["HOME"]
        assert sandbox.read_file(ws, "a.txt") == b"changed"
        path = ws.path
    assert (source / "a.txt").read_text() == "original"
    assert not path.exists()
    assert sandbox.describe() == "local"


def test_none_runs_in_place_and_cleanup_keeps_the_tree(source: Path) -> None:
    sandbox = NoSandbox()
    with sandbox.workspace(source) as ws:
        assert ws.path == source.resolve()
        sandbox.run(ws, [PYTHON, "-c", "open('b.txt', 'w').write('x')"], timeout=30)
    assert (source / "b.txt").read_text() == "x"
    assert sandbox.describe() == "none"
    with pytest.raises(ProvisionError):
        sandbox.provision(source, commit="HEAD")


def test_cleanup_failure_is_reported(
    source: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from assay.sandbox import provision

    monkeypatch.setenv(
        "ASSAY_WORKSPACE_DIR", str(tmp_path)
    )  # the leftover lands where pytest cleans

    def broken_remove(path: object) -> None:
        raise OSError("device busy")

    monkeypatch.setattr(provision, "remove_tree", broken_remove)
    sandbox = LocalSandbox()
    with pytest.raises(CleanupError, match="device busy"), sandbox.workspace(source):
        pass


def test_cleanup_failure_never_masks_the_first_error(
    source: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from assay.sandbox import provision

    monkeypatch.setenv(
        "ASSAY_WORKSPACE_DIR", str(tmp_path)
    )  # the leftover lands where pytest cleans

    monkeypatch.setattr(
        provision, "remove_tree", lambda path: (_ for _ in ()).throw(OSError("busy"))
    )
    with (
        pytest.raises(RuntimeError, match="the real problem") as info,
        LocalSandbox().workspace(source),
    ):
        raise RuntimeError("the real problem")
    assert any("cleanup failed" in note for note in info.value.__notes__)


def test_paths_outside_the_workspace_are_refused(source: Path) -> None:
    sandbox = LocalSandbox()
    with sandbox.workspace(source) as ws:
        with pytest.raises(ValueError):
            sandbox.read_file(ws, "../../etc/passwd")
        with pytest.raises(ValueError):
            sandbox.write_file(ws, "link/../../escape", b"x")


def test_write_file_replaces_a_link_instead_of_writing_through_it(source: Path) -> None:
    sandbox = LocalSandbox()
    with sandbox.workspace(source) as ws:
        sandbox.write_file(ws, "link", b"written")  # `link` points at a.txt
        assert not (ws.path / "link").is_symlink()
        assert (ws.path / "link").read_bytes() == b"written"
        assert (ws.path / "a.txt").read_text() == "original"
