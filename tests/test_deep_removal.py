"""A tree deeper than Python's recursion limit is removed like any other: a chain of 1500
folders made the removal of a workspace or scratch raise RecursionError, and the tree was
left on disk."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from assay.sandbox.provision import remove_tree
from assay.scratch import remove_scratch

DEPTH = 1500


def _dig(top: Path, depth: int) -> None:
    fd = os.open(top, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)


@pytest.mark.parametrize("remove", [remove_scratch, remove_tree])
def test_a_read_only_tree_deeper_than_recursion_is_removed(
    tmp_path: Path, remove: Callable[[Path], None]
) -> None:
    top = tmp_path / "deep"
    top.mkdir()
    _dig(top, DEPTH)
    (top / "d").chmod(0o500)

    try:
        remove(top)
        assert not top.exists()
    finally:  # a tree this deep left behind breaks pytest's own removal of old runs
        subprocess.run(["chmod", "-R", "u+rwx", str(top)], check=False, capture_output=True)
        subprocess.run(["rm", "-rf", str(top)], check=False)
