"""`--base` for a project in a subdirectory of its git repository (a package of a
monorepo): the base is that directory of the commit, not the repository's top. It was
the top: the package's tests read as deleted and added at other paths, `--protect`
planned from the top's tree and found nothing to run (UNVERIFIED), and the Stop hook
under `--protect` blocked every stop in such a package."""

from __future__ import annotations

from pathlib import Path

from assay.base_requirements import declared_by_base
from tests.cli import assay, assay_env, no_traceback, verified_json
from tests.repos import git_repo

PACKAGE = {
    "README.md": "# a monorepo\n",
    "pkg/pyproject.toml": '[project]\nname = "tiny"\nversion = "0"\n',
    "pkg/calc.py": "def add(a, b):\n    return a + b\n",
    "pkg/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}
WEAKENED = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == add(2, 3)\n"


def test_protect_judges_a_package_by_its_own_base(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo", PACKAGE)
    package = repo / "pkg"
    honest = verified_json(package, tmp_path / "s1", "--base", "HEAD", "--protect")
    assert honest["status"] == "VERIFIED", honest["note"]

    (package / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (package / "test_calc.py").write_text(WEAKENED)
    protected = verified_json(package, tmp_path / "s2", "--base", "HEAD", "--protect")
    assert protected["status"] == "FAILED", protected["note"]
    assert "test_calc::test_add" in protected["note"]

    compared = verified_json(package, tmp_path / "s3", "--base", "HEAD")
    assert compared["status"] == "INDETERMINATE", compared["note"]
    assert "protected_modified test_calc.py" in compared["note"], compared["note"]


def test_the_base_declares_what_the_package_declares(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo", PACKAGE)
    declared = declared_by_base(repo / "pkg", "HEAD")
    assert declared.problem is None
    assert declared.names == frozenset({"tiny"}) and declared.read == ("pyproject.toml",)


def test_a_package_directory_the_change_made_a_link_to_another_is_refused(
    tmp_path: Path,
) -> None:
    """The package's place in the repository picks its base: `pkg` moved aside, broken,
    and made a link to a sibling package whose tests pass had that sibling judged, against
    its own base, VERIFIED for `pkg`."""
    other = {f"other/{name[4:]}": text for name, text in PACKAGE.items() if name[:4] == "pkg/"}
    repo = git_repo(tmp_path / "repo", {**PACKAGE, **other})
    (repo / "pkg").rename(repo / "pkg_impl")
    (repo / "pkg_impl" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (repo / "pkg").symlink_to("other")

    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state"))
    done = assay("verify", "--base", "HEAD", "--protect", str(repo / "pkg"), env=env)
    no_traceback(done)
    assert done.returncode == 2, done.stdout
    assert "a link inside the repository" in done.stderr
