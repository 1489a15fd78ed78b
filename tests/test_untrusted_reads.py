"""Every read, on the host, of a file the repository or the code under test chose: a FIFO,
a link to a root-only file outside the tree, a link to /dev/zero, a 2 GiB sparse file.

Each public entry point is called in a child process with its address space capped and a
deadline, and must return quickly, within bounded memory, without the secret anywhere in
its answer, and fail closed: tampering and protection call what they cannot read safely
changed; the cache key refuses to vouch for it; `Sandbox.read_file` raises.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.cli import ASSAY, assay_env
from tests.repos import git_repo, write

PY = sys.executable

#: Only ever inside root-only files outside the tree: it must never come back.
SECRET = "SECRET-5d1e08-root-only"

#: Far above what assay needs, far below what reading a 2 GiB file or /dev/zero takes.
PEAK_RSS_BOUND_KIB = 256 * 1024
#: A call that takes longer than this blocked (a FIFO) or read something endless.
CHILD_DEADLINE_S = 30.0
SPARSE_BYTES = 2 << 30

JEST_PACKAGE = '{"name": "web", "jest": {"testMatch": ["**/*.test.js"]}}\n'
#: The same jest section as the base's: read through a link, the change would look unchanged.
SECRET_PACKAGE = f'{{"name": "{SECRET}", "jest": {{"testMatch": ["**/*.test.js"]}}}}\n'
PYPROJECT = '[project]\nname = "calc"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n'

BASE_FILES = {
    "calc.py": "def add(a, b):\n    return a + b\n",
    "tests/__init__.py": "",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n",
    "pyproject.toml": PYPROJECT,
    "web/package.json": JEST_PACKAGE,
}

ATTACKS = ("fifo", "link_to_root_only_file", "link_to_dev_zero", "sparse_2gib")

#: The child: cap the address space, make one call, print its result (or the error it
#: raised) and its peak resident size.
CHILD_HEAD = """
import json, resource, sys
cap = 4 << 30
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
"""
CHILD_TAIL = """
try:
    outcome = {"result": call(*sys.argv[1:])}
except Exception as exc:
    outcome = {"error": type(exc).__name__, "message": str(exc)}
# VmHWM is this program's own peak: ru_maxrss would also count the forking parent's size
# before exec (a large pytest process), which says nothing about the call.
status = open("/proc/self/status").read()
outcome["peak_rss_kib"] = int(status.split("VmHWM:")[1].split()[0])
print(json.dumps(outcome))
"""

DETECT_TAMPERING = """
from assay.protect import protected_set
from assay.tamper import detect_tampering
def call(base, change):
    return detect_tampering(base, change, protected_set()).to_dict()
"""
RESTORE_PROTECTED = """
from assay.protect import protected_set
from assay.protected_workspace import restore_protected
def call(workspace, base):
    return restore_protected(workspace, base, protected_set()).to_dict()
"""
WORKSPACE_DIGEST = """
from assay.cache import workspace_digest
def call(root):
    return workspace_digest(root)
"""
READ_FILE = """
from pathlib import Path
from assay.sandbox import LocalSandbox
from assay.sandbox.base import Workspace
def call(root, rel):
    data = LocalSandbox().read_file(Workspace(run_id="untrusted", path=Path(root)), rel)
    return data.decode("utf-8", "replace")
"""


def call_in_child(function: str, *args: str) -> dict[str, Any]:
    """`function`'s `call(*args)` in a capped child; fails if it blocks, crashes, leaks
    the secret or grows past the memory bound."""
    started = time.monotonic()
    try:
        done = subprocess.run(
            [PY, "-c", CHILD_HEAD + function + CHILD_TAIL, *args],
            capture_output=True,
            text=True,
            timeout=CHILD_DEADLINE_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the call did not return within {CHILD_DEADLINE_S:g} s (blocked)")
    assert done.returncode == 0, done.stderr
    assert SECRET not in done.stdout + done.stderr
    outcome: dict[str, Any] = json.loads(done.stdout)
    assert outcome["peak_rss_kib"] < PEAK_RSS_BOUND_KIB, outcome
    assert time.monotonic() - started < CHILD_DEADLINE_S
    return outcome


# --------------------------------------------------------------------------- planting


def root_only_dir(tmp_path: Path) -> Path:
    """A directory outside every tree, as root makes it: 0700, its package.json 0600."""
    assert os.geteuid() == 0, "these tests plant root-only files: run them as root"
    outside = tmp_path / "outside"
    outside.mkdir(mode=0o700)
    (outside / "package.json").write_text(SECRET_PACKAGE)
    (outside / "package.json").chmod(0o600)
    (outside / "secret").write_text(SECRET)
    (outside / "secret").chmod(0o600)
    return outside


def replace(path: Path) -> Path:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()
    return path


def sparse(path: Path, last: bytes = b"") -> Path:
    """A file of SPARSE_BYTES that takes no disk, optionally ending in `last`."""
    with open(replace(path), "wb") as f:
        f.truncate(SPARSE_BYTES - len(last))
        f.seek(0, os.SEEK_END)
        f.write(last)
    return path


def base_and_change(tmp_path: Path, attack: str) -> tuple[Path, Path]:
    """A base tree and a copy of it with one attack planted at protected paths."""
    base = write(tmp_path / "base", BASE_FILES)
    if attack == "link_to_dev_zero":
        # A base whose pyproject.toml is a link (monorepos do this): the base's sections
        # cannot be read, and the change's /dev/zero must not compare equal to that.
        write(base, {"config/pyproject.toml": PYPROJECT})
        replace(base / "pyproject.toml").symlink_to("config/pyproject.toml")
    change = tmp_path / "change"
    shutil.copytree(base, change, symlinks=True)
    if attack == "fifo":
        os.mkfifo(replace(change / "tests" / "__init__.py"))  # where the base has an empty file
    elif attack == "link_to_root_only_file":
        replace(change / "web").symlink_to(root_only_dir(tmp_path), target_is_directory=True)
    elif attack == "link_to_dev_zero":
        replace(change / "pyproject.toml").symlink_to("/dev/zero")
    elif attack == "sparse_2gib":
        sparse(change / "tests" / "test_calc.py")
        sparse(change / "pyproject.toml")
    return base, change


# --------------------------------------------------------------------------- tampering

TAMPER_EXPECTED = {
    "fifo": {("protected_modified", "tests/__init__.py")},
    "link_to_root_only_file": {("section_changed", "web/package.json")},
    "link_to_dev_zero": {("section_changed", "pyproject.toml")},
    "sparse_2gib": {
        ("protected_modified", "tests/test_calc.py"),
        ("section_changed", "pyproject.toml"),
    },
}


@pytest.mark.slow
@pytest.mark.parametrize("attack", ATTACKS)
def test_detect_tampering_calls_what_it_cannot_read_safely_changed(
    tmp_path: Path, attack: str
) -> None:
    base, change = base_and_change(tmp_path, attack)
    report = call_in_child(DETECT_TAMPERING, str(base), str(change))["result"]
    signals = {(s["kind"], s["path"]) for s in report["signals"]}
    assert TAMPER_EXPECTED[attack] <= signals, report
    assert report["tampered"]


def test_detect_tampering_of_an_untouched_linked_pyproject_is_quiet(tmp_path: Path) -> None:
    """The control for the above: a link the change left alone is not a change."""
    base, change = base_and_change(tmp_path, "link_to_dev_zero")
    replace(change / "pyproject.toml").symlink_to("config/pyproject.toml")
    report = call_in_child(DETECT_TAMPERING, str(base), str(change))["result"]
    assert not report["tampered"], report


def test_detect_tampering_does_not_read_a_hard_link_to_a_root_only_file(tmp_path: Path) -> None:
    """A hard link names a file the change did not write: its lines (a skip marker here)
    would otherwise be quoted in the signals."""
    base, change = base_and_change(tmp_path, "none")
    secret = root_only_dir(tmp_path) / "test_secret.py"
    secret.write_text(f"@pytest.mark.skip  # {SECRET}\ndef test_add():\n    assert True\n")
    secret.chmod(0o600)
    os.link(secret, replace(change / "tests" / "test_calc.py"))
    report = call_in_child(DETECT_TAMPERING, str(base), str(change))["result"]
    signals = {(s["kind"], s["path"]) for s in report["signals"]}
    assert ("protected_modified", "tests/test_calc.py") in signals, report


# --------------------------------------------------------------------------- protection


def test_restore_protected_replaces_a_fifo_where_the_base_has_an_empty_file(
    tmp_path: Path,
) -> None:
    base, workspace = base_and_change(tmp_path, "fifo")
    result = call_in_child(RESTORE_PROTECTED, str(workspace), str(base))["result"]
    assert "tests/__init__.py" in result["restored"]
    restored = workspace / "tests" / "__init__.py"
    assert restored.is_file() and restored.read_text() == ""


def test_restore_protected_replaces_a_directory_link_to_a_root_only_tree(tmp_path: Path) -> None:
    base, workspace = base_and_change(tmp_path, "link_to_root_only_file")
    result = call_in_child(RESTORE_PROTECTED, str(workspace), str(base))["result"]
    assert "web/package.json" in result["restored"]
    assert not (workspace / "web").is_symlink()
    assert (workspace / "web" / "package.json").read_text() == JEST_PACKAGE
    assert (tmp_path / "outside" / "package.json").read_text() == SECRET_PACKAGE


def test_restore_protected_replaces_a_link_to_dev_zero(tmp_path: Path) -> None:
    base, workspace = base_and_change(tmp_path, "link_to_dev_zero")
    result = call_in_child(RESTORE_PROTECTED, str(workspace), str(base))["result"]
    assert "pyproject.toml" in result["restored"]
    assert os.readlink(workspace / "pyproject.toml") == "config/pyproject.toml"


@pytest.mark.slow
def test_restore_protected_compares_2gib_files_within_bounded_memory(tmp_path: Path) -> None:
    base = write(tmp_path / "base", BASE_FILES)
    sparse(base / "tests" / "data.bin", last=b"base")
    workspace = tmp_path / "workspace"
    shutil.copytree(base, workspace, symlinks=True)
    sparse(workspace / "tests" / "data.bin", last=b"base")  # the same bytes, a fresh file
    result = call_in_child(RESTORE_PROTECTED, str(workspace), str(base))["result"]
    assert result == {"restored": [], "removed": []}


def _committed_repo_with_a_fifo(root: Path) -> Path:
    repo = git_repo(root, {k: v for k, v in BASE_FILES.items() if k != "web/package.json"})
    os.mkfifo(replace(repo / "tests" / "__init__.py"))
    return repo


def _verify_protect(repo: Path, sandbox: str) -> subprocess.CompletedProcess[str]:
    env = assay_env()
    argv = [ASSAY, "verify", str(repo), "--base", "HEAD", "--protect", "--sandbox", sandbox]
    try:
        return subprocess.run(
            [*argv, "--kind", "test", "--json"],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("assay verify --protect blocked on a FIFO in the tree")


@pytest.mark.slow
def test_verify_protect_does_not_block_on_a_fifo(tmp_path: Path) -> None:
    """The whole way: `assay verify --base HEAD --protect` on a tree with a FIFO where the
    base has a protected file: it returns, with a verdict that is not a pass."""
    repo = _committed_repo_with_a_fifo(tmp_path / "repo")
    done = _verify_protect(repo, "local")
    assert "Traceback" not in done.stderr
    report = json.loads(done.stdout)
    assert report["status"] != "VERIFIED", report["note"]
    assert stat.S_ISFIFO(os.lstat(repo / "tests" / "__init__.py").st_mode)  # the tree is as it was


@pytest.mark.slow
def test_protect_in_place_is_refused_rather_than_overwriting_the_tree(tmp_path: Path) -> None:
    """`--sandbox none` runs in the user's own tree: restoring the base's files there would
    overwrite the user's work, so the combination is a usage error and nothing is touched."""
    repo = _committed_repo_with_a_fifo(tmp_path / "repo")
    done = _verify_protect(repo, "none")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "overwrite" in done.stderr + done.stdout
    assert stat.S_ISFIFO(os.lstat(repo / "tests" / "__init__.py").st_mode)


# --------------------------------------------------------------------------- cache key


def test_workspace_digest_refuses_to_key_a_tree_with_a_fifo(tmp_path: Path) -> None:
    tree = write(tmp_path / "tree", BASE_FILES)
    os.mkfifo(replace(tree / "tests" / "__init__.py"))
    outcome = call_in_child(WORKSPACE_DIGEST, str(tree))
    assert outcome.get("error") == "CacheError", outcome


@pytest.mark.slow
def test_workspace_digest_never_hashes_through_a_directory_link(tmp_path: Path) -> None:
    """`web` replaced by a link to a root-only directory: the workspace gets the link as a
    link, so the key covers the link, never what is behind it (a secret's content must not
    move the key)."""
    repo = git_repo(tmp_path / "repo", BASE_FILES)
    outside = root_only_dir(tmp_path)
    replace(repo / "web").symlink_to(outside, target_is_directory=True)
    first = call_in_child(WORKSPACE_DIGEST, str(repo))
    assert "result" in first, first
    (outside / "package.json").write_text(SECRET_PACKAGE + "\n")
    assert call_in_child(WORKSPACE_DIGEST, str(repo))["result"] == first["result"]
    replace(repo / "web").symlink_to(tmp_path, target_is_directory=True)
    assert call_in_child(WORKSPACE_DIGEST, str(repo))["result"] != first["result"]


def test_workspace_digest_never_opens_a_device_reached_through_a_link(tmp_path: Path) -> None:
    """`dev` replaced by a link to /dev: hashed as a link, quickly, with bounded memory."""
    repo = git_repo(tmp_path / "repo", {**BASE_FILES, "dev/zero": "tracked\n"})
    replace(repo / "dev").symlink_to("/dev", target_is_directory=True)
    outcome = call_in_child(WORKSPACE_DIGEST, str(repo))
    assert "result" in outcome, outcome
    assert outcome["peak_rss_kib"] < 256 * 1024


@pytest.mark.slow
def test_workspace_digest_hashes_a_link_to_dev_zero_as_a_link(tmp_path: Path) -> None:
    tree = write(tmp_path / "tree", BASE_FILES)
    (tree / "zero").symlink_to("/dev/zero")
    first = call_in_child(WORKSPACE_DIGEST, str(tree))["result"]
    replace(tree / "zero").symlink_to("/dev/null")
    assert call_in_child(WORKSPACE_DIGEST, str(tree))["result"] != first


@pytest.mark.slow
def test_workspace_digest_streams_a_2gib_file(tmp_path: Path) -> None:
    tree = write(tmp_path / "tree", BASE_FILES)
    sparse(tree / "big.bin", last=b"a")
    first = call_in_child(WORKSPACE_DIGEST, str(tree))["result"]
    sparse(tree / "big.bin", last=b"b")  # only the last byte differs
    assert call_in_child(WORKSPACE_DIGEST, str(tree))["result"] != first


# --------------------------------------------------------------------------- Sandbox.read_file


@pytest.mark.slow
@pytest.mark.parametrize("attack", ATTACKS)
def test_sandbox_read_file_refuses(tmp_path: Path, attack: str) -> None:
    workspace = write(tmp_path / "workspace", BASE_FILES)
    target = workspace / "planted"
    if attack == "fifo":
        os.mkfifo(target)
    elif attack == "link_to_root_only_file":
        target.symlink_to(root_only_dir(tmp_path) / "secret")
    elif attack == "link_to_dev_zero":
        target.symlink_to("/dev/zero")
    else:
        sparse(target)
    outcome = call_in_child(READ_FILE, str(workspace), "planted")
    assert outcome.get("error") == "ValueError", outcome


def test_sandbox_read_file_refuses_a_hard_link_to_a_root_only_file(tmp_path: Path) -> None:
    workspace = write(tmp_path / "workspace", BASE_FILES)
    os.link(root_only_dir(tmp_path) / "secret", workspace / "planted")
    outcome = call_in_child(READ_FILE, str(workspace), "planted")
    assert outcome.get("error") == "ValueError", outcome


def test_sandbox_read_file_refuses_a_file_behind_a_directory_link(tmp_path: Path) -> None:
    workspace = write(tmp_path / "workspace", BASE_FILES)
    replace(workspace / "web").symlink_to(root_only_dir(tmp_path), target_is_directory=True)
    outcome = call_in_child(READ_FILE, str(workspace), "web/package.json")
    assert outcome.get("error") == "ValueError", outcome


def test_sandbox_read_file_reads_a_plain_file(tmp_path: Path) -> None:
    workspace = write(tmp_path / "workspace", BASE_FILES)
    assert call_in_child(READ_FILE, str(workspace), "calc.py")["result"] == BASE_FILES["calc.py"]


# --------------------------------------------------------------------------- install and probe

INSTALL_STEPS = """
from pathlib import Path
from assay.install import install_steps
def call(root):
    return [list(step.argv) for step in install_steps(Path(root))]
"""
FINGERPRINT = """
from assay.probe_record import fingerprint
def call(binary):
    parts = fingerprint(binary, module="pytest")
    return None if parts is None else [list(part) for part in parts]
"""


@pytest.mark.slow
@pytest.mark.parametrize("attack", ATTACKS)
def test_install_steps_read_pyproject_within_bounds(tmp_path: Path, attack: str) -> None:
    """`verify --install` reads the workspace's pyproject.toml for its extras; setup.py
    makes it a Python project whatever pyproject.toml has become."""
    workspace = write(tmp_path / "workspace", {"setup.py": "", "pyproject.toml": ""})
    pyproject = replace(workspace / "pyproject.toml")
    if attack == "fifo":
        os.mkfifo(pyproject)
    elif attack == "link_to_root_only_file":
        secret = root_only_dir(tmp_path) / "secret.toml"
        secret.write_text(f'[project.optional-dependencies]\ntest = ["{SECRET}"]\n')
        secret.chmod(0o600)
        pyproject.symlink_to(secret)
    elif attack == "link_to_dev_zero":
        pyproject.symlink_to("/dev/zero")
    else:
        sparse(pyproject)
    steps = call_in_child(INSTALL_STEPS, str(workspace))["result"]
    assert [".venv/bin/python", "-m", "pip", "install", "-q", "-e", "."] in steps, steps


def test_probe_fingerprint_reads_a_workspace_pyvenv_cfg_within_bounds(tmp_path: Path) -> None:
    """After `--install`, the workspace's virtualenv was written by the code under test;
    identifying its Python reads its pyvenv.cfg on the host."""
    venv = tmp_path / "workspace" / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(os.path.realpath(PY))
    sparse(venv / "pyvenv.cfg")
    assert call_in_child(FINGERPRINT, str(venv / "bin" / "python"))["result"] is None


# --------------------------------------------------------------------------- the module itself


def test_paths_that_leave_the_tree_are_refused(tmp_path: Path) -> None:
    from assay.untrusted_files import Refused, read_untrusted

    tree = write(tmp_path / "tree", BASE_FILES)
    for rel in ("../tree/calc.py", "tests/../calc.py", "./calc.py", "tests//test_calc.py"):
        refused = read_untrusted(tree, rel)
        assert isinstance(refused, Refused) and "not a plain path" in refused.reason, rel


def test_hard_links_are_refused_unless_the_caller_allows_them(tmp_path: Path) -> None:
    from assay.untrusted_files import OpenFile, Refused, open_untrusted

    tree = write(tmp_path / "tree", BASE_FILES)
    os.link(tree / "calc.py", tree / "again.py")
    with open_untrusted(tree, "again.py") as refused:
        assert isinstance(refused, Refused) and "2 hard links" in refused.reason
    with open_untrusted(tree, "again.py", single_link=False) as found:
        assert isinstance(found, OpenFile) and found.size == len(BASE_FILES["calc.py"])


def test_same_entry_is_never_true_for_what_cannot_be_read(tmp_path: Path) -> None:
    from assay.untrusted_files import same_entry

    a, b = tmp_path / "a", tmp_path / "b"
    for tree in (a, b):
        write(tree, {"file": "same\n"})
        (tree / "link").symlink_to("file")
        os.mkfifo(tree / "fifo")
    (b / "other").symlink_to("elsewhere")
    (a / "other").symlink_to("file")
    assert same_entry(a, b, "file") and same_entry(a, b, "link") and same_entry(a, b, "absent")
    assert not same_entry(a, b, "fifo")
    assert not same_entry(a, b, "other")
