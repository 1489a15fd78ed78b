"""Attacks through the pre-commit hooks assay runs as checks, under `--base REF --protect`.

The hooks are the base's, but what they check is the change's tree, with the tools
installed there: a module the change adds is handed to mypy and ruff as
`pre-commit run --all-files` hands it in CI (it was VERIFIED with a type error, the base's
list of files naming only the base's modules), and a hook's tool installed in the
workspace's virtualenv is read there, not in the base's export, which has none (under
`--install --protect` every hook was left out, a type error VERIFIED).
"""

from __future__ import annotations

import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from assay.pipeline import VerifyOptions, base_plan
from tests.cli import path_with_venv, verified_json
from tests.repos import commit_all, write_dedented
from tests.test_pre_commit_hooks import PROJECT

MYPY = version("mypy")
RUFF = version("ruff")

BASE = {
    **{rel: text for rel, text in PROJECT.items() if rel != "docs/conf.py"},
    ".pre-commit-config.yaml": f"""
        ci:
          autoupdate_schedule: monthly
        repos:
          - repo: https://github.com/pre-commit/mirrors-mypy
            rev: v{MYPY}
            hooks:
              - id: mypy
                args: [--strict]
          - repo: https://github.com/astral-sh/ruff-pre-commit
            rev: v{RUFF}
            hooks:
              - id: ruff-check
    """,
}
#: A module no other imports (a console script's): only the hook's list of files reaches it.
ADDED_MODULE = {
    "src/hooked/cli.py": """
        import os


        def main() -> int:
            count: int = "three"
            return count
    """,
}


@pytest.fixture(autouse=True)
def venv_tools_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan reads the release of the tool on PATH, as `assay` run from here finds it."""
    monkeypatch.setenv("PATH", path_with_venv())


@pytest.mark.slow
def test_a_module_the_change_adds_is_handed_to_the_bases_hooks(tmp_path: Path) -> None:
    repo = commit_all(write_dedented(tmp_path / "repo", BASE))
    write_dedented(repo, ADDED_MODULE)
    report = verified_json(repo, tmp_path / "state", "--protect", "--base", "HEAD")
    assert report["status"] == "FAILED", report["note"]
    verdicts = {c["name"]: c["verdict"] for c in report["checks"]}
    assert verdicts["mypy"] == "fail" and verdicts["ruff"] == "fail", verdicts
    assert "src/hooked/cli.py:5: Incompatible types in assignment" in report["note"]


def test_a_version_file_the_change_declares_does_not_hide_its_module(tmp_path: Path) -> None:
    """Which file the build writes (and no repository tracks) is the base's to say."""
    base = write_dedented(tmp_path / "base", BASE)
    declared = {
        "pyproject.toml": BASE["pyproject.toml"]
        + '[tool.setuptools_scm]\nversion_file = "src/hooked/cli.py"\n'
    }
    change = write_dedented(tmp_path / "change", {**BASE, **ADDED_MODULE, **declared})
    plan = base_plan(base, change, VerifyOptions(), installed=change)
    argvs = {c.name: c.argv for c in plan.checks}
    assert "src/hooked/cli.py" in argvs["mypy"] and "src/hooked/cli.py" in argvs["ruff"]


def test_the_hooks_tool_is_read_where_it_is_installed(tmp_path: Path) -> None:
    """`--install --protect` plans at the base's export, with the workspace's virtualenv:
    the release of the hook's tool is read from that virtualenv's install records."""
    base = write_dedented(tmp_path / "base", BASE)
    workspace = write_dedented(tmp_path / "workspace", {**BASE, **ADDED_MODULE})
    lib = f".venv/lib/python3.{sys.version_info.minor}/site-packages"
    write_dedented(workspace, {".venv/pyvenv.cfg": "home = /usr/bin\n"})
    for name in ("python", "mypy", "ruff"):
        write_dedented(workspace, {f".venv/bin/{name}": ""})
    for dist in (f"mypy-{MYPY}", f"ruff-{RUFF}"):
        write_dedented(workspace, {f"{lib}/{dist}.dist-info/METADATA": ""})
    plan = base_plan(base, workspace, VerifyOptions(), installed=workspace)
    argvs = {c.name: c.argv for c in plan.checks}
    assert {"mypy", "ruff"} <= set(argvs), plan.notes
    assert argvs["mypy"][:3] == (".venv/bin/python", "-m", "mypy")
    assert "src/hooked/cli.py" in argvs["mypy"]


@pytest.mark.slow
def test_the_hooks_the_workspace_holds_are_the_bases(tmp_path: Path) -> None:
    """`--install` installs each hook's tool at the `rev` the workspace's configuration
    pins: a change that pinned mypy 1.13.0 had it installed, and the base's 2.4.1 hook was
    left out for the release it found, its type error VERIFIED. The configuration is
    restored from the base: the base's own test, reading it, sees the base's pin."""
    reads_pin = {
        "tests/test_pin.py": f"""
            from pathlib import Path


            def test_mypy_is_pinned_at_its_release() -> None:
                assert "rev: v{MYPY}" in Path(".pre-commit-config.yaml").read_text()
        """
    }
    repo = commit_all(write_dedented(tmp_path / "repo", {**BASE, **reads_pin}))
    config = (repo / ".pre-commit-config.yaml").read_text()
    (repo / ".pre-commit-config.yaml").write_text(config.replace(f"v{MYPY}", "v1.13.0"))
    report = verified_json(repo, tmp_path / "state", "--protect", "--base", "HEAD")
    assert report["status"] == "VERIFIED", report["note"]


ISORT_BASE = {
    **BASE,
    ".pre-commit-config.yaml": f"""
        ci:
          autoupdate_schedule: monthly
        repos:
          - repo: https://github.com/PyCQA/isort
            rev: {version("isort")}
            hooks:
              - id: isort
    """,
}
UNSORTED = {
    "src/hooked/__init__.py": """
        import sys
        import os


        def double(x: int) -> int:
            return 2 * x + 0 * len(sys.argv) * len(os.sep)
    """,
}


@pytest.mark.slow
@pytest.mark.parametrize(
    "settings",
    [
        {".isort.cfg": "[settings]\nskip_glob = src/*\n"},
        {".editorconfig": "root = true\n[*.py]\nskip_glob = src/*\n"},
        {"pyproject.toml": BASE["pyproject.toml"] + '[tool.isort]\nskip_glob = ["src/*"]\n'},
    ],
    ids=[".isort.cfg", ".editorconfig", "tool.isort"],
)
def test_isorts_settings_are_the_bases(tmp_path: Path, settings: dict[str, str]) -> None:
    """isort's hook reads its settings from the first of `.isort.cfg`, pyproject.toml's
    `[tool.isort]`, setup.cfg, tox.ini and `.editorconfig` that has some, and its
    `--filter-files` skips what they skip: each, set by the change, passed unsorted imports."""
    repo = commit_all(write_dedented(tmp_path / "repo", ISORT_BASE))
    write_dedented(repo, {**UNSORTED, **settings})
    report = verified_json(repo, tmp_path / "state", "--protect", "--base", "HEAD")
    assert report["status"] == "FAILED", report["note"]
    assert "isort failed" in report["note"], report["note"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "directive", ["# mypy: ignore_errors", "# mypy: warn-unreachable, ignore-errors"]
)
def test_mypy_turned_off_for_a_file_however_spelt_is_not_verified(
    tmp_path: Path, directive: str
) -> None:
    """mypy reads `_` for `-` in a directive's options, in any order: each of these passed
    the base's mypy hook over a type error, where `# mypy: ignore-errors` was a signal."""
    repo = commit_all(write_dedented(tmp_path / "repo", BASE))
    module = repo / "src/hooked/__init__.py"
    module.write_text(f"{directive}\n{module.read_text()}\nLIMIT: int = '3'\n")
    report = verified_json(repo, tmp_path / "state", "--protect", "--base", "HEAD")
    assert report["status"] == "INDETERMINATE", report["note"]
    assert f"turns a type checker or linter off for the whole file: {directive}" in report["note"]


def test_files_the_change_adds_beyond_the_cap_are_all_handed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hook handed more files than one run takes is left out of a tree's own plan; a
    change that added 4,001 modules beside its type error had the base's hooks left out
    so, and was VERIFIED. Where the change's tree is listed, each is handed."""
    monkeypatch.setattr("assay.discovery.pre_commit_hooks.MAX_FILES", 3)
    base = write_dedented(tmp_path / "base", BASE)
    added = {f"src/hooked/gen/m{i}.py": f"X = {i}\n" for i in range(3)}
    change = write_dedented(tmp_path / "change", {**BASE, **added})
    plan = base_plan(base, change, VerifyOptions(), installed=change)
    argvs = {c.name: c.argv for c in plan.checks}
    assert {"mypy", "ruff"} <= set(argvs), plan.notes
    assert all(rel in argvs["mypy"] for rel in added)


@pytest.mark.slow
def test_a_settings_file_the_hooks_args_name_is_the_bases(tmp_path: Path) -> None:
    """`--config-file=ci/types.cfg` in the mypy hook's `args`: a change that set
    `ignore_errors` there passed its type error through the base's hook."""
    config = BASE[".pre-commit-config.yaml"].replace(
        "args: [--strict]", "args: [--strict, --config-file=ci/types.cfg]"
    )
    base = {**BASE, ".pre-commit-config.yaml": config, "ci/types.cfg": "[mypy]\n"}
    repo = commit_all(write_dedented(tmp_path / "repo", base))
    module = repo / "src/hooked/__init__.py"
    module.write_text(module.read_text() + "\n\nLIMIT: int = '3'\n")
    (repo / "ci/types.cfg").write_text("[mypy]\nignore_errors = True\n")
    report = verified_json(repo, tmp_path / "state", "--protect", "--base", "HEAD")
    assert report["status"] == "FAILED", report["note"]
    assert "Incompatible types in assignment" in report["note"], report["note"]


def test_the_files_hooks_name_as_settings_are_read_from_their_args(tmp_path: Path) -> None:
    from assay.discovery.named_settings import hook_config_files

    config = """
        repos:
          - repo: https://github.com/pre-commit/mirrors-mypy
            rev: v1.0.0
            hooks:
              - id: mypy
                args: [--config-file, ci/types.cfg, --strict]
          - repo: https://github.com/astral-sh/ruff-pre-commit
            rev: v0.8.0
            hooks:
              - id: ruff
                args: [--config=lint/ruff.toml, --config, "lint.ignore = ['E501']"]
          - repo: https://github.com/PyCQA/isort
            rev: 5.13.2
            hooks:
              - id: isort
                args: [--settings-path=conf, --sp, ../outside.cfg]
    """
    repo = write_dedented(tmp_path, {".pre-commit-config.yaml": config})
    found = hook_config_files(repo)
    assert found == (
        "ci/types.cfg",
        "ci/types.cfg/**",
        "lint/ruff.toml",
        "lint/ruff.toml/**",
        "conf",
        "conf/**",
    ), found


@pytest.mark.slow
def test_a_settings_file_a_ci_step_names_is_the_bases(tmp_path: Path) -> None:
    """`mypy --config-file ci/types.cfg src` in a workflow: the same file, named by a
    planned command rather than a hook, set to `ignore_errors` by the change."""
    workflow = """
        name: ci
        on: [push]
        jobs:
          lint:
            runs-on: ubuntu-latest
            steps:
              - uses: actions/checkout@v4
              - run: mypy --config-file ci/types.cfg src
    """
    base = {
        **{k: v for k, v in BASE.items() if k != ".pre-commit-config.yaml"},
        ".github/workflows/ci.yml": workflow,
        "ci/types.cfg": "[mypy]\nstrict = True\n",
    }
    repo = commit_all(write_dedented(tmp_path / "repo", base))
    module = repo / "src/hooked/__init__.py"
    module.write_text(module.read_text() + "\n\nLIMIT: int = '3'\n")
    (repo / "ci/types.cfg").write_text("[mypy]\nignore_errors = True\n")
    report = verified_json(repo, tmp_path / "state", "--protect", "--base", "HEAD")
    assert report["status"] == "FAILED", report["note"]
    assert "Incompatible types in assignment" in report["note"], report["note"]


@pytest.mark.slow
def test_a_package_directory_named_build_is_handed_to_the_hooks(tmp_path: Path) -> None:
    """Only the root's `build` and `dist` are build output: CI's flake8 lints a package's
    `build/` module directory, which was handed to no hook and VERIFIED with an unused
    import, while the root's `build/` is still left out."""
    config = f"""
        ci:
          autoupdate_schedule: monthly
        repos:
          - repo: https://github.com/PyCQA/flake8
            rev: {version("flake8")}
            hooks:
              - id: flake8
    """
    repo = commit_all(
        write_dedented(tmp_path / "repo", {**BASE, ".pre-commit-config.yaml": config})
    )
    write_dedented(
        repo,
        {
            "src/hooked/build/__init__.py": "",
            "src/hooked/build/impl.py": "import os\n",
            "build/lib/hooked/stale.py": "import sys\n",
        },
    )
    report = verified_json(repo, tmp_path / "state", "--protect", "--base", "HEAD")
    assert report["status"] == "FAILED", report["note"]
    assert "src/hooked/build/impl.py:1: 'os' imported but unused" in report["note"]
    assert "stale.py" not in report["note"], report["note"]


def test_a_change_too_wide_to_list_is_no_plan_that_leaves_the_hooks_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The listing stops at 20,000 directories: a change that adds more, listed before
    `src`, handed the base's hooks nothing, and they were left out without a word."""
    monkeypatch.setattr("assay.discovery.hook_files._MAX_DIRS", 5)
    base = write_dedented(tmp_path / "base", BASE)
    change = write_dedented(tmp_path / "change", {**BASE, **ADDED_MODULE})
    for i in range(6):
        (change / f"a{i}").mkdir()
    plan = base_plan(base, change, VerifyOptions(), installed=change)
    assert not {"mypy", "ruff"} & {c.name for c in plan.checks}
    assert any("mypy" in u and "more than 5 directories" in u for u in plan.unplanned), plan


@pytest.mark.slow
def test_a_module_deeper_than_the_listing_goes_does_not_drop_the_bases_hooks(
    tmp_path: Path,
) -> None:
    """The listing stops 32 folders down: a change's module with a type error deeper than
    that was handed to no hook, and VERIFIED."""
    repo = commit_all(write_dedented(tmp_path / "repo", BASE))
    deep = "src/hooked/" + "d/" * 32
    write_dedented(repo, {deep + "cli.py": ADDED_MODULE["src/hooked/cli.py"]})
    report = verified_json(repo, tmp_path / "state", "--protect", "--base", "HEAD")
    assert report["status"] == "INDETERMINATE", report["note"]
    assert "pre-commit hook mypy (mypy) could not be run on the change" in report["note"]
