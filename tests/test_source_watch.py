"""Whether a package's sources changed (`assay.source_watch`): with real inotify and real
files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assay.source_watch import SourceWatch


@pytest.fixture
def package(tmp_path: Path) -> Path:
    top = tmp_path / "pkg"
    (top / "sub").mkdir(parents=True)
    (top / "__init__.py").write_text("")
    (top / "sub" / "mod.py").write_text("X = 1\n")
    return top


@pytest.fixture
def watch(package: Path) -> SourceWatch:
    made = SourceWatch(str(package))
    assert made._fd is not None, "inotify could not watch the package"
    return made


def test_nothing_changed_is_answered_without_a_stamp(watch: SourceWatch, package: Path) -> None:
    watch.top = str(package / "gone")  # a stamp taken now would differ: none may be taken
    assert not watch.changed()


@pytest.mark.parametrize(
    "change",
    [
        lambda top: (top / "sub" / "mod.py").write_text("X = 2\n"),
        lambda top: os.utime(top / "sub" / "mod.py", ns=(0, 10**18)),
        lambda top: (top / "new.py").write_text(""),
        lambda top: (top / "sub" / "mod.py").unlink(),
        lambda top: (top / "sub" / "mod.py").rename(top / "mod.py"),
        lambda top: (top / "sub2").mkdir() or (top / "sub2" / "m.py").write_text(""),
    ],
    ids=["written", "touched", "added", "removed", "moved", "new-subpackage"],
)
def test_a_change_to_a_source_file_is_seen(watch: SourceWatch, package: Path, change) -> None:
    change(package)
    assert watch.changed()
    assert watch.changed(), "a change seen once is a change still"


def test_bytecode_written_beside_the_sources_is_no_change(
    watch: SourceWatch, package: Path
) -> None:
    cache = package / "sub" / "__pycache__"
    cache.mkdir()
    (cache / "mod.cpython-311.pyc").write_bytes(b"\0")
    assert not watch.changed()
    (package / "sub" / "mod.py").write_text("X = 3\n")
    assert watch.changed(), "the events drained before did not hide the later change"


def _put_back_as_a_copy(top: Path) -> Path:
    """`sub` replaced by a copy of itself (same names, sizes and times: the same stamp)."""
    import shutil

    shutil.copytree(top / "sub", top / "sub.new", copy_function=shutil.copy2)
    shutil.rmtree(top / "sub")
    (top / "sub.new").rename(top / "sub")
    return top / "sub" / "mod.py"


def _made_then_filled(top: Path) -> Path:
    """A new subpackage's directory, made before its first file is written."""
    (top / "sub2").mkdir()
    return top / "sub2" / "m.py"


@pytest.mark.parametrize("made", [_put_back_as_a_copy, _made_then_filled])
def test_a_change_in_a_directory_made_since_the_watch_began_is_seen(
    watch: SourceWatch, package: Path, made
) -> None:
    """A request between a directory's making and a change to a file in it sees nothing
    changed (right: nothing did yet); the change after must still be seen, though the
    directory was not there to be watched when the watch began."""
    path = made(package)
    assert not watch.changed()
    path.write_text("X = 'changed'\n")
    assert watch.changed(), "a change in a directory made since the watch began went unseen"
