"""Proving in-tree environments, reading what a base declares, and starting runners so
that the tree cannot stand in for them: each piece on real files and real interpreters,
without a sandbox (the end-to-end attacks are in test_attacks_environment.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from assay.base_requirements import declared_in, parse_requirement
from assay.environment_proof import (
    autoloaded_entry_points,
    launch_env,
    plugins_named,
    prove_environments,
)
from assay.evidence import Check
from assay.tools.python import unshadowed
from assay.untrusted_files import Refused, walk_untrusted
from assay.verdict import Kind
from tests.repos import write_dedented
from tests.test_attacks_environment import BASE_PYTHON, make_venv, plant, pyproject, wheel

PYTEST = Check("pytest", Kind.TEST, (".venv/bin/python", "-m", "pytest"), tool="pytest")
NODE_TEST = Check("node-test", Kind.TEST, ("node", "--test"), tool="node-test")
DECLARED = declared_in({"pyproject.toml": pyproject("pytest", "pytest-tiny").encode()})


# --------------------------------------------------------------------------- what a base declares


def test_a_pyproject_declares_its_dependencies_extras_groups_and_its_own_name() -> None:
    declared = declared_in(
        {
            "pyproject.toml": b"""
[project]
name = "Calc_Lib"
dependencies = ["Requests[socks]>=2; python_version>'3.8'", "attrs"]
[project.optional-dependencies]
test = ["pytest-asyncio==0.23"]
[dependency-groups]
dev = ["ruff", {include-group = "test"}]
[tool.poetry.group.lint.dependencies]
Flake8-Bugbear = "*"
""",
        }
    )
    assert {"requests", "attrs", "pytest-asyncio", "ruff", "flake8-bugbear"} <= declared.names
    assert declared.projects == {"calc-lib"}
    assert declared.extras == {"requests": {"socks"}}


def test_requirement_files_setup_py_and_lockfiles_are_read_as_text() -> None:
    declared = declared_in(
        {
            "requirements-dev.txt": b"# tools\n-r requirements.txt\npytest-cov>=4  # cov\n"
            b"-e git+https://example.invalid/x.git#egg=pytest_xdist\n--index-url x\n",
            "setup.py": b"DEPS = ['hypothesis']\nsetup(name='calc', install_requires=DEPS,"
            b" extras_require={'t': ['pytest-mock']})\n",
            "uv.lock": b'[[package]]\nname = "pluggy"\nversion = "1"\n',
        }
    )
    assert {"pytest-cov", "pytest-xdist", "hypothesis", "pytest-mock", "pluggy"} <= declared.names
    assert "calc" in declared.projects


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("pytest[testing] >= 8 ; extra == 'x'", ("pytest", frozenset({"testing"}))),
        ("Zope.Interface", ("zope-interface", frozenset())),
        ("pkg @ https://example.invalid/pkg.whl", ("pkg", frozenset())),
        ("https://example.invalid/pkg.whl", None),
        ("./local/dir", None),
        ("-r other.txt", None),
    ],
)
def test_a_requirement_names_a_distribution_or_nothing(
    text: str, parsed: tuple[str, frozenset[str]] | None
) -> None:
    assert parse_requirement(text) == parsed


def test_a_projects_own_entry_points_are_read_from_each_kind_of_manifest() -> None:
    pyproject_toml = b"""
[project]
name = "pytest-calc"
[project.entry-points.pytest11]
calc = "pytest_calc.plugin"
[tool.poetry.plugins."flake8.extension"]
C9 = "calc_lint:Checker"
"""
    setup_cfg = b"[metadata]\nname = pytest-calc\n[options.entry_points]\npytest11 =\n\tcalc = pytest_calc\n"
    setup_py = (
        b"setup(name='pytest-calc', entry_points={'pytest11': ['calc = pytest_calc : plugin']})\n"
    )
    assert declared_in({"pyproject.toml": pyproject_toml}).entry_points == {
        ("pytest11", "calc", "pytest_calc.plugin"),
        ("flake8.extension", "C9", "calc_lint:Checker"),
    }
    assert declared_in({"setup.cfg": setup_cfg}).entry_points == {
        ("pytest11", "calc", "pytest_calc")
    }
    assert declared_in({"setup.py": setup_py}).entry_points == {
        ("pytest11", "calc", "pytest_calc:plugin")
    }


def test_entry_points_are_read_as_importlib_reads_them() -> None:
    text = b"[console_scripts]\nx = a:b\n\n[pytest11]\n# a comment\n asyncio = pytest_asyncio.plugin \n"
    assert autoloaded_entry_points(text) == {"pytest11": [("asyncio", "pytest_asyncio.plugin")]}


# --------------------------------------------------------------------------- runners the tree cannot replace


def test_only_python_m_of_a_known_runner_is_rewritten() -> None:
    (python, flag, _, *rest) = unshadowed((".venv/bin/python", "-m", "pytest", "-q"))
    assert (python, flag, rest) == (".venv/bin/python", "-c", ["pytest", "-q"])
    assert unshadowed(("python3", "-m", "myproject.selftest")) == (
        "python3",
        "-m",
        "myproject.selftest",
    )
    assert unshadowed(("pytest", "-q")) == ("pytest", "-q")


def _interpreters() -> list[str]:
    """This machine's interpreters, older ones included where pyenv keeps them: the start
    must work on each (`-P` exists only from 3.11)."""
    found = [BASE_PYTHON]
    versions = Path(os.path.expanduser("~/.pyenv/versions"))
    if versions.is_dir():
        for version in sorted(versions.iterdir()):
            python = version / "bin" / "python3"
            if python.exists() and not version.name.startswith(("2.", "3.5")):
                found.append(str(python))
    return list(dict.fromkeys(found))


@pytest.mark.parametrize("python", _interpreters())
def test_a_root_module_cannot_answer_for_the_runner(tmp_path: Path, python: str) -> None:
    """A `pytest.py`, a `compileall.py` and a `runpy.py` at the root (before 3.11 `-m`
    itself imports runpy from the working directory) answer `python -m`; started
    unshadowed, they do not."""
    plant(
        tmp_path,
        {
            "pytest.py": "print('2 passed')\n",
            "runpy.py": "print('2 passed')\n",
            "compileall.py": "print('2 passed')\n",
            "mypkg/__init__.py": "VALUE = 7\n",
        },
    )
    argv = unshadowed((python, "-m", "compileall", "-q", "mypkg"))
    done = subprocess.run(
        argv, check=False, cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert "2 passed" not in done.stdout and done.returncode == 0, (done.stdout, done.stderr)
    probe = subprocess.run(
        unshadowed((python, "-m", "pytest", "--version")),
        check=False,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "2 passed" not in probe.stdout  # the real pytest, or "No module named pytest"
    assert probe.returncode == 0 or "No module named pytest" in probe.stderr, probe.stderr


@pytest.mark.parametrize("python", _interpreters())
def test_the_working_directory_comes_first_as_with_dash_m(tmp_path: Path, python: str) -> None:
    """Once the runner is found, the tree's modules come before every other entry, as `-m`
    puts them: a flat layout's `tests` package also reachable through an editable install's
    path entry (here PYTHONPATH) is imported from the working directory, as unittest's
    discovery requires."""
    test = "import unittest\nclass T(unittest.TestCase):\n    def test_it(self):\n"
    plant(tmp_path / "tree", {"tests/__init__.py": "", "tests/test_it.py": test + "        pass\n"})
    elsewhere = {"tests/__init__.py": "", "tests/test_it.py": test + "        self.fail()\n"}
    plant(tmp_path / "elsewhere", elsewhere)
    done = subprocess.run(
        unshadowed((python, "-m", "unittest", "discover", "-t", ".", "-s", "tests")),
        check=False,
        cwd=tmp_path / "tree",
        env={**os.environ, "PYTHONPATH": str(tmp_path / "elsewhere")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and "Ran 1 test" in done.stderr, done.stderr


# --------------------------------------------------------------------------- proving a virtualenv


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A project with a real in-tree virtualenv holding one pip-installed pytest plugin."""
    root = tmp_path / "tree"
    write_dedented(root, {"calc.py": "X = 1\n"})
    make_venv(root, tmp_path)
    return root


def site(root: Path) -> Path:
    return next((root / ".venv" / "lib").glob("python3*/site-packages"))


def problem_paths(root: Path, *checks: Check, declared: object = DECLARED) -> list[str]:
    proof = prove_environments(root, checks or (PYTEST,), declared)  # type: ignore[arg-type]
    return [p.path for p in proof.problems]


def test_an_honest_venv_is_proven_and_its_declared_plugin_named(tree: Path) -> None:
    proof = prove_environments(tree, (PYTEST,), DECLARED)
    assert proof.proven, proof.problems
    assert proof.checked == (".venv",) and proof.pytest_plugins == ("pytest_tiny",)
    env = launch_env(proof, tree / "pycache")
    assert env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] == "1" and env["PYTEST_PLUGINS"] == "pytest_tiny"


def test_a_plugin_the_bases_pre_commit_hook_installs_beside_its_tool_is_declared(
    tree: Path,
) -> None:
    """`--install` installs a hook's `additional_dependencies` with its tool: tomli's
    flake8 hook adds flake8-bugbear, whose entry point left the tree unproven."""
    hooks = (
        "repos:\n- repo: https://github.com/PyCQA/flake8\n  rev: 7.3.0\n  hooks:\n"
        "  - id: flake8\n    additional_dependencies:\n    - pytest-tiny\n"
    )
    declared = declared_in(
        {"pyproject.toml": pyproject("pytest").encode(), ".pre-commit-config.yaml": hooks.encode()}
    )
    assert problem_paths(tree, declared=declared) == []
    undeclared = declared_in({"pyproject.toml": pyproject("pytest").encode()})
    assert problem_paths(tree, declared=undeclared) != []


def test_a_plugin_the_run_loads_by_name_is_not_named_again(tree: Path) -> None:
    """`-p tiny` loads the entry point itself; older pytest (8.3) refuses the same module
    named in `PYTEST_PLUGINS` too, as registered twice under two names."""
    proof = prove_environments(tree, (PYTEST,), DECLARED)
    assert proof.pytest_entry_points == (("tiny", "pytest_tiny"),), proof
    for named in ({"tiny"}, {"pytest_tiny"}):
        env = launch_env(proof, tree / "pycache", named)
        assert "PYTEST_PLUGINS" not in env and env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] == "1"
    assert launch_env(proof, tree / "pycache", {"other"})["PYTEST_PLUGINS"] == "pytest_tiny"


def test_the_plugins_a_run_names_are_read_from_its_words_and_its_configuration(
    tmp_path: Path,
) -> None:
    write_dedented(
        tmp_path,
        {"pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-p anyio -p no:trio -ra"\n'},
    )
    check = Check(
        "pytest", Kind.TEST, (".venv/bin/python", "-m", "pytest", "-pxdist", "-p", "timeout"),
        env={"PYTEST_ADDOPTS": "-p mock"}, tool="pytest",
    )  # fmt: skip
    lint = Check("ruff", Kind.LINT, ("ruff", "check", "-p", "nothing"), tool="ruff")
    assert plugins_named(tmp_path, (check, lint)) == {
        "anyio",
        "no:trio",
        "xdist",
        "timeout",
        "mock",
    }


def test_a_link_in_site_packages_is_not_followed_and_not_proven(tree: Path) -> None:
    (site(tree) / "helper.py").symlink_to(tree / "calc.py")
    assert problem_paths(tree) == [str((site(tree) / "helper.py").relative_to(tree))]


def test_an_interpreter_and_a_home_inside_the_tree_are_not_proven(tree: Path) -> None:
    fake = tree / "tools" / "python3"
    plant(tree, {"tools/python3": "#!/bin/sh\necho 2 passed\n"})
    fake.chmod(0o755)
    (tree / ".venv" / "bin" / "python").unlink()
    (tree / ".venv" / "bin" / "python").symlink_to(fake)
    config = tree / ".venv" / "pyvenv.cfg"
    config.write_text(config.read_text().replace("home = ", f"home = {tree}/tools\n#"))
    assert {".venv/bin/python", ".venv/pyvenv.cfg"} <= set(problem_paths(tree))


def test_an_interpreter_whose_link_reads_as_the_systems_but_leads_into_the_tree(
    tree: Path,
) -> None:
    """`.venv/bin/python -> TREE/.venv/k/../../../usr/bin/python3` reads as /usr/bin, yet
    `k` links to a deeper directory of the tree, so the kernel finds the tree's own
    `.venv/usr/bin/python3` (a script that could flip every report)."""
    plant(tree, {".venv/usr/bin/python3": "#!/bin/sh\necho 2 passed\n"})
    (tree / ".venv/usr/bin/python3").chmod(0o755)
    ups = len(tree.parts) + 1  # from .venv/k, by its words, to /
    (tree / ".venv" / ("d/" * ups)).mkdir(parents=True)
    (tree / ".venv/k").symlink_to("d/" * ups)  # by the kernel, as many back to .venv
    lexical = f"{tree}/.venv/k/" + "../" * ups + "usr/bin/python3"
    assert os.path.normpath(lexical) == "/usr/bin/python3"  # by its words, the system's
    assert os.path.realpath(lexical) == str(tree / ".venv/usr/bin/python3")
    (tree / ".venv/bin/python").unlink()
    (tree / ".venv/bin/python").symlink_to(lexical)
    assert ".venv/bin/python" in problem_paths(tree)


def test_a_command_in_bin_no_record_accounts_for_is_not_proven(tree: Path) -> None:
    plant(tree, {".venv/bin/ruff": "#!/bin/sh\nexit 0\n"})
    assert problem_paths(tree) == [".venv/bin/ruff"]


def test_a_legacy_editable_install_of_the_tree_is_proven_and_its_directory_scanned(
    tree: Path,
) -> None:
    """`setup.py develop` (pinned old setuptools: click 8.1.3's requirements) leaves an
    `easy-install.pth` naming the tree and an `.egg-link`, which no record accounts for."""
    (site(tree) / "easy-install.pth").write_text(f"{tree}\n")
    (site(tree) / "calc.egg-link").write_text(f"{tree}\n.")
    assert problem_paths(tree) == []
    # The directory it names is on the import path at start-up: a start-up module there runs.
    plant(tree, {"usercustomize.py": "import os\n"})
    assert problem_paths(tree) == ["usercustomize.py"]


@pytest.mark.parametrize(
    "lines",
    ["import os; os.environ['X'] = '1'\n{tree}\n", "/usr/lib\n", "{tree}/../elsewhere\n"],
    ids=["code", "outside", "outside-by-dots"],
)
def test_an_easy_install_pth_that_runs_code_or_leaves_the_tree_is_not_proven(
    tree: Path, lines: str
) -> None:
    pth = site(tree) / "easy-install.pth"
    pth.write_text(lines.format(tree=tree))
    assert problem_paths(tree) == [str(pth.relative_to(tree))]


def test_a_startup_module_on_pythonpath_in_the_tree_is_not_proven(tree: Path) -> None:
    plant(tree, {"src/sitecustomize.py": "import os\n"})
    check = Check("pytest", Kind.TEST, PYTEST.argv, env={"PYTHONPATH": "src"}, tool="pytest")
    assert problem_paths(tree, check) == ["src/sitecustomize.py"]


def test_metadata_in_the_working_directory_declaring_a_pytest_plugin_is_not_proven(
    tree: Path,
) -> None:
    """`importlib.metadata` reads every directory on the import path, the working one too."""
    plant(tree, {"evil-1.0.dist-info/entry_points.txt": "[pytest11]\ntiny = evil\n"})
    assert problem_paths(tree) == ["evil-1.0.dist-info"]


PLUGIN_PROJECT = declared_in(
    {
        "setup.cfg": b"[metadata]\nname = pytest-calc\n[options.entry_points]\npytest11 =\n  calc = pytest_calc\n"
    }
)


@pytest.mark.parametrize(
    ("metadata", "entry_points", "proven"),
    [
        # What building the project writes into the tree: the plugin its base declares.
        ("pytest_calc.egg-info", "[pytest11]\ncalc = pytest_calc\n", True),
        ("pytest_calc-1.0.dist-info", "[pytest11]\ncalc = pytest_calc\n", True),
        # Under the project's name, a plugin its base does not declare.
        ("pytest_calc.egg-info", "[pytest11]\ncalc = pytest_calc\nmore = calc_helpers\n", False),
        ("pytest_calc.egg-info", "[pytest11]\ncalc = calc_helpers\n", False),
        # The declared plugin, under another project's name.
        ("pytest_other.egg-info", "[pytest11]\ncalc = pytest_calc\n", False),
    ],
)
def test_the_projects_own_metadata_in_the_tree_may_declare_only_its_declared_plugins(
    tree: Path, metadata: str, entry_points: str, proven: bool
) -> None:
    plant(tree, {f"{metadata}/entry_points.txt": entry_points})
    problems = problem_paths(tree, declared=PLUGIN_PROJECT)
    assert (metadata not in problems) is proven, problems


def test_the_trees_node_modules_is_never_proven_and_blocks_only_the_checks_that_use_it(
    tmp_path: Path,
) -> None:
    """Only one assay's own install made and holds is (`tests/test_npm_install_proof.py`)."""
    plant(tmp_path, {"node_modules/jest/index.js": "module.exports = {}\n"})
    proof = prove_environments(tmp_path, (NODE_TEST, PYTEST), DECLARED)
    assert [p.path for p in proof.problems] == ["node_modules"]
    assert proof.blocks(NODE_TEST) and not proof.blocks(PYTEST)
    note = proof.note() or ""
    assert "believed under --protect only where `--install` builds it with npm" in note


# --------------------------------------------------------------------------- walking an untrusted tree


def test_a_walk_lists_links_without_following_them_and_is_bounded(tmp_path: Path) -> None:
    plant(tmp_path, {"top/a/b.py": "", "top/c.txt": "", "outside/secret.txt": ""})
    (tmp_path / "top" / "link").symlink_to(tmp_path / "outside")
    found = walk_untrusted(tmp_path, "top")
    assert isinstance(found, list)
    assert [(e.path, e.kind) for e in found] == [
        ("top/a", "dir"),
        ("top/a/b.py", "file"),
        ("top/c.txt", "file"),
        ("top/link", "link"),
    ]
    assert isinstance(walk_untrusted(tmp_path, "top", limit=2), Refused)
    assert isinstance(walk_untrusted(tmp_path, "top/link"), Refused)
    assert walk_untrusted(tmp_path, "missing") is None


def test_the_proof_reads_a_linked_environment_where_the_workspace_links_to(
    tree: Path, tmp_path: Path
) -> None:
    """A workspace links to its source's `.venv`: read there, not refused as a link."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / ".venv").symlink_to(tree / ".venv")
    proof = prove_environments(workspace, (PYTEST,), DECLARED, source=tree, linked=(".venv",))
    assert proof.proven and proof.checked == (".venv",), proof.problems
    elsewhere = prove_environments(
        workspace, (PYTEST,), DECLARED, source=tmp_path, linked=(".venv",)
    )
    assert not elsewhere.proven


NOXFILE = b"""
import nox

@nox.session
def lint(session):
    session.install("-r", "dev-requirements.txt")
    session.install(".")
    session.install("pytest", "pytest-tiny>=0.1")
"""
HATCH_ENVS = b"""
[envs.default]
dependencies = ["pytest"]
[envs.lint]
extra-dependencies = ["pytest-tiny"]
"""


@pytest.mark.parametrize(
    "manifests",
    [
        {"noxfile.py": NOXFILE},
        {"hatch.toml": HATCH_ENVS},
        {"pyproject.toml": HATCH_ENVS.replace(b"[envs.", b"[tool.hatch.envs.")},
    ],
    ids=["noxfile", "hatch.toml", "pyproject-hatch"],
)
def test_what_nox_and_hatch_install_is_declared_and_its_plugin_proven(
    tree: Path, manifests: dict[str, bytes]
) -> None:
    """pyproject-hooks' noxfile installs pre-commit, which brings a pytest plugin: the
    environment `--install --protect` built from it was refused as undeclared."""
    declared = declared_in(manifests)
    assert {"pytest", "pytest-tiny"} <= declared.names, declared
    assert problem_paths(tree, declared=declared) == []
    assert problem_paths(tree, declared=declared_in({"noxfile.py": b"import nox\n"})) != []


def test_a_setup_py_deeper_than_the_parser_goes_declares_nothing() -> None:
    deep = {"setup.py": ("x = " + "-" * 100_000 + "1\n").encode()}
    assert declared_in(deep).names == frozenset()


@pytest.mark.parametrize("hook", ["zz_boot.pth", "zz_boot.start"])
def test_a_start_up_file_of_an_undeclared_distribution_is_not_proven(
    tree: Path, tmp_path: Path, hook: str
) -> None:
    """A `.pth` line runs at every start, and so does a PEP 829 `.start` entry (Python
    3.15): a distribution the base does not declare may carry neither, its record whole."""
    built = wheel(tmp_path, "boot", "1.0", {hook: "boot:run\n", "boot.py": "def run(): pass\n"})
    python = tree / ".venv" / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-index", "--no-deps"]
        + ["--disable-pip-version-check", str(built)],
        check=True,
        capture_output=True,
    )
    proof = prove_environments(tree, (PYTEST,), DECLARED)
    said = [p.problem for p in proof.problems]
    assert any(f"{hook}, run at every start" in p for p in said), said
