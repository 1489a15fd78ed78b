"""`assay verify --install`: install steps read from the repository, and a real fresh-clone run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from assay.evidence import Check
from assay.install import INSTALL_TIMEOUT_S, install_steps
from assay.tools.node import PNPM_STORE, YARN_CLASSIC_CACHE
from assay.tools.poetry_groups import poetry_requirement
from assay.verdict import Kind
from tests.cli import installed_and_verified
from tests.repos import write, write_dedented


def argvs(root: Path) -> list[tuple[str, ...]]:
    """Each install step's argv, but the download of the build's requirements (whose own
    test is `test_the_builds_requirements_are_kept_for_checks_that_build_offline`)."""
    return [step.argv for step in install_steps(root) if step.name != "install-build-requirements"]


def test_python_project_gets_a_venv_and_its_test_extras(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname="p"\nversion="1"\n[project.optional-dependencies]\ntest=["pytest"]\ndocs=["x"]\n',
            "requirements-dev.txt": "ruff\n",
        },
    )
    assert argvs(tmp_path) == [
        ("python3", "-m", "venv", ".venv"),
        (".venv/bin/python", "-m", "pip", "install", "-q", "-r", "requirements-dev.txt"),
        # The project last: a dependency that needs it (pytest needs pluggy) must not
        # replace the working tree with a copy from the index.
        (".venv/bin/python", "-m", "pip", "install", "-q", "-e", ".[test]"),
    ]
    step = install_steps(tmp_path)[0]
    assert (
        step.kind is Kind.BUILD
        and step.timeout_s == INSTALL_TIMEOUT_S
        and step.source == "pyproject.toml"
    )


@pytest.mark.parametrize(
    ("pyproject", "wanted"),
    [
        (
            (
                '[build-system]\nrequires = ["setuptools>=61.2", "setuptools_scm[toml]>=3.4.1"]\n'
                'build-backend = "setuptools.build_meta"\n'
            ),
            ("setuptools>=61.2", "setuptools_scm[toml]>=3.4.1", "wheel"),
        ),
        (
            (
                '[build-system]\nrequires = ["hatchling", "--index-url=https://evil.example"]\n'
                'build-backend = "hatchling.build"\n'
            ),
            ("hatchling",),
        ),
        ('[project]\nname = "p"\n', ("setuptools>=40.8.0", "wheel")),
    ],
)
def test_the_builds_requirements_are_kept_for_checks_that_build_offline(
    tmp_path: Path, pyproject: str, wanted: tuple[str, ...]
) -> None:
    """zipp 3.20.2: pytest-checkdocs builds the project's metadata in a test, in an isolated
    environment pip fills from the index; offline, that test failed a pristine tree."""
    write(tmp_path, {"pyproject.toml": pyproject})
    step = next(s for s in install_steps(tmp_path) if s.name == "install-build-requirements")
    download = (".venv/bin/python", "-m", "pip", "download", "-q", "-d", ".venv/build-wheels")
    assert step.argv[:2] == ("sh", "-c") and step.argv[4:] == (*download, *wanted)


def test_mypy_with_install_types_gets_its_stubs_during_the_install(tmp_path: Path) -> None:
    """freezegun 1.5.5's tox runs `mypy --install-types --non-interactive`, which asks pip
    for stubs: a check without the network cannot. One run after the project is installed,
    with the network, puts them in the environment; its own findings are no verdict."""
    write(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "p"\n',
            "tox.ini": "[testenv:mypy]\ncommands = mypy pkg --install-types --non-interactive\n",
        },
    )
    steps = install_steps(tmp_path)
    assert steps[-1].name == "install-mypy-stubs"
    assert steps[-1].argv[-5:] == ("-m", "mypy", "pkg", "--install-types", "--non-interactive")
    assert steps[-1].argv[:3] == ("sh", "-c", '"$@" >/dev/null 2>&1 || true')
    write(tmp_path, {"tox.ini": "[testenv:mypy]\ncommands = mypy pkg\n"})
    assert all(s.name != "install-mypy-stubs" for s in install_steps(tmp_path))
    # Run where the check runs, with the environment's interpreter found from there.
    from assay.install import _mypy_stub_steps

    check = Check(
        name="mypy", kind=Kind.TYPECHECK, argv=("mypy", ".", "--install-types"), cwd="sub"
    )
    [step] = _mypy_stub_steps([check])
    assert step.cwd == "sub" and step.argv[4:] == (
        "../.venv/bin/python",
        "-m",
        "mypy",
        ".",
        "--install-types",
        "--non-interactive",
    )


def test_requirement_files_for_another_python_are_not_installed(tmp_path: Path) -> None:
    """click 8.1.8's layout: `requirements/tests37.txt` is for tox's py37 environment; its
    `importlib-metadata` pin, installed on a newer Python, made mypy see an unused ignore."""
    write(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname="p"\nversion="1"\n',
            "requirements/tests.txt": "pytest\n",
            "requirements/tests37.txt": "importlib-metadata==6.7.0\npytest==7.4.4\n",
            "requirements/typing-py3.8.txt": "mypy==1.4.1\n",
            "requirements/typing.txt": "mypy\n",
            "test-requirements-py27.txt": "mock\n",
            "test-requirements-py3.txt": "pytest-timeout\n",
        },
    )
    installed = [argv[-1] for argv in argvs(tmp_path) if argv[-2:-1] == ("-r",)]
    assert installed == [
        "test-requirements-py3.txt",
        "requirements/tests.txt",
        "requirements/typing.txt",
    ]


def best_effort(otherwise: str, *argv: str) -> tuple[str, ...]:
    """An install step's argv whose failure does not stop the install."""
    return ("sh", "-c", '"$@" || echo "assay: $0" >&2', otherwise, *argv)


def test_dev_dependencies_from_every_place_projects_declare_them(tmp_path: Path) -> None:
    """Extras, PEP 735 groups (includes resolved, no `--group`: the venv's pip may predate
    it), requirement files for development and tests, and tox's deps, each installed once."""
    write_dedented(
        tmp_path,
        {
            "pyproject.toml": """
                [project]
                name = "p"
                version = "1"
                [project.optional-dependencies]
                Testing = ["pytest"]
                docs = ["sphinx"]
                [dependency-groups]
                test = ["pytest>=7", {include-group = "typing"}]
                typing = ["mypy==1.10.0", {include-group = "test"}]
                docs = ["sphinx"]
                lint = ["ruff", "--index-url=https://evil.example/simple", "-e ../outside"]
            """,
            "requirements.txt": "attrs\n",
            "requirements-ci-dev.txt": "coverage\n",
            "requirements-tests.txt": "hypothesis\n",
            "test-requirements.txt": "freezegun\n",
            "requirements/dev.txt": "pytest-mock\n",
            "requirements/docs.txt": "sphinx\n",
            "tox.ini": """
                [testenv]
                deps =
                    pytest-xdist
                    -rrequirements.txt
                    -r requirements/lint.txt
                    py38: importlib-metadata
                    -e .
                    --pre
                [testenv:lint]
                deps = flake8==7.0.0
                [testenv:docs]
                deps = sphinx-rtd-theme
                [testenv:py27]
                deps = mock==1.0.1
            """,
            "requirements/lint.txt": "pylint\n",
        },
    )
    pip = (".venv/bin/python", "-m", "pip", "install", "-q")
    assert argvs(tmp_path) == [
        ("python3", "-m", "venv", ".venv"),
        (*pip, "-r", "requirements.txt"),
        # A file tox or CI names must install; the others, beside what tox and the groups
        # declare for the tests, are a developer's lists (`_best_effort`).
        *(
            best_effort(
                f"{name} did not install; the checks that need what it names will say",
                *pip,
                "-r",
                name,
            )
            for name in (
                "requirements-ci-dev.txt",
                "requirements-tests.txt",
                "test-requirements.txt",
                "requirements/dev.txt",
            )
        ),
        (*pip, "-r", "requirements/lint.txt"),
        # The test group (with the group it includes) must install; the other dev groups
        # may fail, as docs tools too new for this Python do (filelock's `dev`).
        (*pip, "pytest>=7", "mypy==1.10.0"),
        (*pip, "pytest-xdist", "flake8==7.0.0"),
        best_effort(
            "these dependency groups did not install; the checks that need them will say",
            *pip,
            "ruff",
        ),
        (*pip, "-e", ".[Testing]"),
    ]
    sources = [step.source for step in install_steps(tmp_path)][-4:]
    assert install_steps(tmp_path)[1].name == "install-build-requirements"
    assert sources == ["pyproject.toml", "tox.ini", "pyproject.toml", "pyproject.toml"]


def test_an_umbrella_dev_group_alone_is_what_the_tests_need(tmp_path: Path) -> None:
    """Without a test group, `dev` is where the tests' needs are: it must install."""
    write(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "p"\n[dependency-groups]\ndev = ["pytest", "sphinx"]\n'
        },
    )
    groups = next(s for s in install_steps(tmp_path) if s.name == "install-python-groups")
    assert groups.argv == (".venv/bin/python", "-m", "pip", "install", "-q", "pytest", "sphinx")


def test_poetry_groups_are_what_the_tests_need(tmp_path: Path) -> None:
    """iso8601 declares hypothesis and pytz in a Poetry group only: not installed, its
    tests could not be collected, and the run read as the code's failure."""
    write_dedented(
        tmp_path,
        {
            "pyproject.toml": """
                [tool.poetry]
                name = "iso8601"
                version = "2.1.0"
                [tool.poetry.dependencies]
                python = "^3.8"
                [tool.poetry.group.dev.dependencies]
                pytest = "^7.4"
                hypothesis = { version = "~6.82", extras = ["pytz"] }
                pytz = "*"
                black = { git = "https://github.com/psf/black" }
                [tool.poetry.group.docs.dependencies]
                sphinx = "^7"
                [build-system]
                requires = ["poetry-core"]
                build-backend = "poetry.core.masonry.api"
            """,
        },
    )
    groups = next(s for s in install_steps(tmp_path) if s.name == "install-python-groups")
    assert groups.argv[-3:] == ("pytest>=7.4,<8", "hypothesis[pytz]>=6.82,<6.83", "pytz")
    assert "dependency groups dev" in groups.reason


@pytest.mark.parametrize(
    ("spec", "requirement"),
    [
        ("^1.2.3", "x>=1.2.3,<2"),
        ("^0.2.3", "x>=0.2.3,<0.3"),
        ("^0.0.3", "x>=0.0.3,<0.0.4"),
        ("^2", "x>=2,<3"),
        ("~1.2.3", "x>=1.2.3,<1.3"),
        ("~1", "x>=1,<2"),
        ("~=1.2", "x~=1.2"),
        ("1.2.*", "x==1.2.*"),
        ("1.2.3", "x==1.2.3"),
        (">=1.2, <2", "x>=1.2,<2"),
        ("*", "x"),
        ("^1.0 || ^2.0", "x"),
        (
            {"version": "^1", "markers": "sys_platform == 'linux'"},
            "x>=1,<2; sys_platform == 'linux'",
        ),
        ({"path": "../x"}, None),
    ],
)
def test_poetry_constraints_as_pip_reads_them(spec: object, requirement: str | None) -> None:
    assert poetry_requirement("x", spec) == requirement


@pytest.mark.parametrize("ci", [True, False])
def test_every_extra_when_ci_installs_them_all(tmp_path: Path, ci: bool) -> None:
    """cattrs: its CI runs `uv run --all-extras --group test pytest`, and its suite tests
    each optional backend (msgspec, pyyaml), each an extra."""
    write_dedented(
        tmp_path,
        {
            "pyproject.toml": """
                [project]
                name = "p"
                version = "1"
                [project.optional-dependencies]
                msgspec = ["msgspec"]
                yaml = ["pyyaml"]
                [dependency-groups]
                test = ["pytest"]
            """,
            "tests/test_x.py": "def test_x(): pass\n",
        },
    )
    if ci:
        workflow = "jobs:\n  t:\n    steps:\n      - run: uv run --all-extras pytest\n"
        write_dedented(tmp_path, {".github/workflows/ci.yml": workflow})
    project = ".[msgspec,yaml]" if ci else "."
    assert argvs(tmp_path)[-1] == (".venv/bin/python", "-m", "pip", "install", "-q", "-e", project)


def test_hatch_environments_for_tests_and_checks_are_installed(tmp_path: Path) -> None:
    """soupsieve 4.1.3: beautifulsoup4, which its tests import, is declared only in its
    hatch environments; the docs environment's tools (one named by URL) are not wanted."""
    write_dedented(
        tmp_path,
        {
            "pyproject.toml": """
                [project]
                name = "p"
                version = "1"
                [tool.hatch.envs.default]
                dependencies = ["pytest"]
                [tool.hatch.envs.dev]
                dependencies = ["pytest", "beautifulsoup4", "mypy"]
                [tool.hatch.envs.dev-ft]
                extra-dependencies = ["html5lib"]
                [tool.hatch.envs.docs]
                dependencies = ["zensical", "lexers @ git+https://example.com/lexers.git"]
            """,
        },
    )
    pip = (".venv/bin/python", "-m", "pip", "install", "-q")
    assert argvs(tmp_path) == [
        ("python3", "-m", "venv", ".venv"),
        (*pip, "pytest", "beautifulsoup4", "mypy", "html5lib"),
        (*pip, "-e", "."),
    ]


@pytest.mark.parametrize("tool", ["tool = 5", "[tool]\nhatch = 'x'", "[tool.hatch]\nenvs = []"])
def test_a_malformed_hatch_table_declares_nothing(tmp_path: Path, tool: str) -> None:
    write(tmp_path, {"pyproject.toml": f"{tool}\n[project]\nname = 'p'\n"})
    assert argvs(tmp_path)[1:] == [(".venv/bin/python", "-m", "pip", "install", "-q", "-e", ".")]


def test_extras_declared_in_setup_cfg_and_named_by_tox(tmp_path: Path) -> None:
    """pluggy 1.0: its test extra lives in setup.cfg, and tox.ini says `extras=testing`."""
    write_dedented(
        tmp_path,
        {
            "setup.py": "from setuptools import setup\nsetup()\n",
            "setup.cfg": """
                [metadata]
                name = p
                [options.extras_require]
                dev = pre-commit
                testing = pytest
                docs = sphinx
            """,
            "tox.ini": "[testenv]\nextras = testing,speedups\ncommands = pytest\n",
        },
    )
    assert argvs(tmp_path)[-1] == (
        ".venv/bin/python",
        "-m",
        "pip",
        "install",
        "-q",
        "-e",
        ".[testing,dev,speedups]",
    )


@pytest.mark.parametrize(
    ("files", "target"),
    [
        # idna 3.20: pytest and hypothesis are only in `[all]`.
        (
            {
                "pyproject.toml": '[project]\nname = "p"\n[project.optional-dependencies]\nall = ["hypothesis"]\ncli = ["click"]\n'
            },
            ".[all]",
        ),
        ({"setup.py": "", "setup.cfg": "[options.extras_require]\nall = hypothesis\n"}, ".[all]"),
        # A project that says what its tests need gets that, not every optional dependency.
        (
            {
                "pyproject.toml": '[project]\nname = "p"\n[project.optional-dependencies]\nall = ["torch"]\ntest = ["pytest"]\n'
            },
            ".[test]",
        ),
        (
            {
                "pyproject.toml": '[project]\nname = "p"\n[project.optional-dependencies]\nall = ["torch"]\n',
                "requirements-dev.txt": "pytest\n",
            },
            ".",
        ),
    ],
)
def test_the_catch_all_extra_only_when_nothing_else_declares_the_tests_needs(
    tmp_path: Path, files: dict[str, str], target: str
) -> None:
    write(tmp_path, files)
    assert argvs(tmp_path)[-1][-2:] == ("-e", target)


def test_pyright_is_installed_when_the_plan_runs_it(tmp_path: Path) -> None:
    """cachetools 8.0.2: tox's pyright env, and pyright left out of the tools step, made the
    check UNVERIFIED. Its PyPI wheel runs offline with the machine's node."""
    write(tmp_path, {"pyproject.toml": '[project]\nname = "p"\n[tool.pyright]\n'})
    steps = {s.name: s.argv for s in install_steps(tmp_path)}
    assert "pyright" in steps["install-python-tools"]


def test_the_planned_linters_and_type_checkers_are_installed_at_the_pinned_versions(
    tmp_path: Path,
) -> None:
    """Nothing the plan runs is left missing: mypy (configured), ruff and pytest (named by
    tox) are installed first, at the versions the pre-commit hooks pin, so that a version a
    requirement file declares still wins when it is installed after them."""
    write_dedented(
        tmp_path,
        {
            "pyproject.toml": """
                [project]
                name = "p"
                version = "1"
                [tool.mypy]
                strict = true
            """,
            "tox.ini": "[testenv]\ncommands = pytest\n[testenv:lint]\ncommands = ruff check src\n",
            ".pre-commit-config.yaml": """
                repos:
                  - repo: https://github.com/pre-commit/mirrors-mypy
                    rev: v1.10.0
                    hooks: [{id: mypy}]
                  - repo: https://github.com/astral-sh/ruff-pre-commit
                    rev: 'v0.4.4'
                    hooks: [{id: ruff}]
                  - repo: https://github.com/psf/black
                    rev: --index-url=https://evil.example
                    hooks: [{id: black}]
            """,
            "requirements-dev.txt": "mypy==1.8.0\n",
            # CI runs the hooks: their pins are what CI checks with.
            ".github/workflows/lint.yml": "jobs:\n  l:\n    steps:\n      - uses: pre-commit/action@v3\n",
        },
    )
    pip = (".venv/bin/python", "-m", "pip", "install", "-q")
    steps = install_steps(tmp_path)
    assert argvs(tmp_path)[:3] == [
        ("python3", "-m", "venv", ".venv"),
        (*pip, "mypy==1.10.0", "pytest", "ruff==0.4.4"),
        (*pip, "-r", "requirements-dev.txt"),
    ]
    assert steps[1].source == ".pre-commit-config.yaml"


def test_requirements_are_never_read_through_links(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside", {"secret-requirements-dev.txt": "x\n"})
    root = write(tmp_path / "repo", {"pyproject.toml": "[project]\nname='p'\n"})
    (root / "requirements-dev.txt").symlink_to(outside / "secret-requirements-dev.txt")
    (root / "tox.ini").symlink_to(outside / "secret-requirements-dev.txt")
    assert all("-r" not in argv for argv in argvs(root))


def test_an_existing_environment_is_used_as_it_is(tmp_path: Path) -> None:
    write(
        tmp_path,
        {"pyproject.toml": "[project]\nname='p'\n", ".venv/bin/python": "", "package.json": "{}"},
    )
    (tmp_path / "node_modules").mkdir()
    assert argvs(tmp_path) == []


def test_node_lockfiles_choose_the_package_manager(tmp_path: Path) -> None:
    for lockfile, expected in [
        ("package-lock.json", ("npm", "ci")),
        # yarn 1's cache with the other package managers', not under the sandbox's HOME.
        ("yarn.lock", ("yarn", "install", "--frozen-lockfile", *YARN_CLASSIC_CACHE)),
        # pnpm's store under node_modules, given on its command line (`PNPM_STORE`).
        ("pnpm-lock.yaml", ("pnpm", "install", "--frozen-lockfile", *PNPM_STORE)),
        ("bun.lock", ("bun", "install", "--frozen-lockfile")),
        ("bun.lockb", ("bun", "install", "--frozen-lockfile")),
    ]:
        root = write(tmp_path / lockfile, {"package.json": "{}", lockfile: ""})
        assert argvs(root) == [expected]
    assert argvs(write(tmp_path / "nolock", {"package.json": "{}"})) == [("npm", "install")]
    berry = write(tmp_path / "berry", {"package.json": "{}", "yarn.lock": "\n__metadata:\n"})
    assert argvs(berry) == [("yarn", "install", "--frozen-lockfile")]


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("pnpm@9.15.0", "pnpm"),
        ("yarn@1.22.22", "yarn"),
        ("bun@1.2.0", "bun"),
        ("npm@10.9.0", "npm"),
    ],
)
def test_without_a_lockfile_the_named_package_manager_installs(
    tmp_path: Path, field: str, expected: str
) -> None:
    """The manager that runs the scripts installs what they use (it was npm's, always)."""
    root = write(tmp_path, {"package.json": json.dumps({"packageManager": field})})
    store = PNPM_STORE if expected == "pnpm" else ()
    assert argvs(root) == [(expected, "install", *store)]


def test_go_and_rust(tmp_path: Path) -> None:
    root = write(tmp_path, {"go.mod": "module x\n", "Cargo.toml": "[package]\nname='x'\n"})
    assert argvs(root) == [("go", "mod", "download"), ("cargo", "fetch")]


def test_malformed_pyproject_still_installs_without_extras(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": "[project\n"})
    assert (".venv/bin/python", "-m", "pip", "install", "-q", "-e", ".") in argvs(tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["local", "bwrap"])
def test_fresh_clone_is_installed_then_verified_with_its_own_environment(
    tmp_path: Path, backend: str
) -> None:
    """Under bwrap the install steps alone get the network (pip must reach the registry)."""
    repo = write(
        tmp_path / "repo",
        {
            "pyproject.toml": (
                '[project]\nname="fresh"\nversion="0.1"\n'
                '[project.optional-dependencies]\ntest=["pytest"]\n'
                '[tool.pytest.ini_options]\npythonpath=["."]\n'
            ),
            "fresh.py": "def double(x):\n    return 2 * x\n",
            "tests/test_fresh.py": "from fresh import double\n\n\ndef test_double():\n    assert double(2) == 4\n",
            # A test that starts a tool by name gets the environment's, as in an activated CI job.
            "tests/test_by_name.py": (
                "import os, shutil, sys\n\n\ndef test_tools_by_name_are_the_environments():\n"
                "    assert os.path.samefile(os.environ['VIRTUAL_ENV'], sys.prefix)\n"
                "    assert os.path.samefile(shutil.which('pytest'), sys.prefix + '/bin/pytest')\n"
            ),
            # The environment's pip is its own, by module and by script (`python_venv`).
            "tests/test_pip.py": (
                "import subprocess, sys\n\n\ndef test_the_environments_pip_runs():\n"
                "    for pip in ([sys.executable, '-m', 'pip'], [sys.prefix + '/bin/pip']):\n"
                "        out = subprocess.run([*pip, '--version'], capture_output=True, text=True)\n"
                "        assert sys.prefix + '/lib/' in out.stdout, out.stderr\n"
            ),
        },
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "verify",
            "--install",
            "--sandbox",
            backend,
            "--json",
            str(repo),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, "ASSAY_CACHE_DIR": str(tmp_path / "cache")},
    )
    report = json.loads(done.stdout)
    assert report["status"] == "VERIFIED", report["note"]
    steps = report["extra"]["install"]
    assert [step["name"] for step in steps] == [
        "install-venv",
        "install-python-tools",  # pytest, which the plan runs
        "install-build-requirements",
        "install-python",
    ]
    assert all(step["verdict"] == "pass" for step in steps)
    assert steps[0]["process"]["argv"][1:3] == ["-I", "-c"]  # the interpreter's pip copied in
    pytest_check = next(c for c in report["checks"] if c["name"] == "pytest")
    assert pytest_check["argv"][0] == ".venv/bin/python"  # the environment the install made
    assert not (repo / ".venv").exists(), (
        "the install must happen in the workspace copy, not the clone"
    )


@pytest.mark.slow
def test_a_test_that_builds_the_project_runs_offline_from_the_kept_wheels(
    tmp_path: Path,
) -> None:
    """As pytest-checkdocs does (zipp, and the projects made from its template): a test
    builds the project in an isolated environment, which pip fills with setuptools. The
    checks have no network: pip takes them from the wheels the install kept."""
    repo = write_dedented(
        tmp_path / "repo",
        {
            "pyproject.toml": """
                [build-system]
                requires = ["setuptools>=61"]
                build-backend = "setuptools.build_meta"
                [project]
                name = "packaged"
                version = "0.1"
                [project.optional-dependencies]
                test = ["pytest"]
            """,
            "packaged.py": "VALUE = 1\n",
            "tests/test_packaging.py": """
                import subprocess, sys

                def test_the_project_builds(tmp_path):
                    subprocess.run(
                        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(tmp_path), "."],
                        check=True,
                    )
                    assert list(tmp_path.glob("packaged-0.1-*.whl"))
            """,
        },
    )
    report = installed_and_verified(repo, tmp_path)
    assert report["status"] == "VERIFIED", report["note"]


@pytest.mark.slow
def test_mypy_install_types_verifies_offline_with_the_stubs_the_install_got(
    tmp_path: Path,
) -> None:
    """mypy `--install-types` wants types-PyYAML for `import yaml`; the check has no network,
    the install step before it had."""
    repo = write_dedented(
        tmp_path / "repo",
        {
            "pyproject.toml": """
                [project]
                name = "loader"
                version = "0.1"
                dependencies = ["pyyaml"]
                [project.optional-dependencies]
                test = ["pytest"]
            """,
            "tox.ini": """
                [testenv]
                commands = pytest
                [testenv:mypy]
                commands = mypy loader.py --strict --install-types --non-interactive
            """,
            "loader.py": """
                import yaml


                def load(text: str) -> object:
                    return yaml.safe_load(text)
            """,
            "tests/test_loader.py": """
                from loader import load


                def test_load():
                    assert load("a: 1") == {"a": 1}
            """,
        },
    )
    report = installed_and_verified(repo, tmp_path)
    assert report["status"] == "VERIFIED", report["note"]
    assert report["extra"]["install"][-1]["name"] == "install-mypy-stubs"


def test_a_syntax_error_in_the_projects_own_file_is_found_in_install_output(tmp_path: Path) -> None:
    """Real Python's words for a file that does not parse, indented as pip shows a build
    backend's output; one under the environment the install made is not the project's."""
    from assay.parsers.crash import syntax_error_in

    write(tmp_path, {"pkg/__init__.py": "from .core import f\n", "pkg/core.py": "def f(:\n"})
    done = subprocess.run(
        [sys.executable, "-c", "import pkg"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    shown = "\n".join("      " + line for line in done.stderr.splitlines())
    found = syntax_error_in(shown, str(tmp_path))
    assert found is not None and (found.file, found.line, found.code) == (
        "pkg/core.py",
        1,
        "SyntaxError",
    )
    assert syntax_error_in(shown, str(tmp_path), ("pkg",)) is None
    assert syntax_error_in(shown, str(tmp_path / "elsewhere")) is None


@pytest.mark.slow
def test_a_fresh_clone_whose_code_does_not_parse_fails_even_when_its_install_stops_on_it(
    tmp_path: Path,
) -> None:
    """idna 3.20 with a syntax error: flit imports the package for its version while pip
    installs it, so the install step itself fails. That is the code's failure: FAILED, with
    where, not an environment that could not be set up."""
    repo = write_dedented(
        tmp_path / "repo",
        {
            "pyproject.toml": """
                [build-system]
                requires = ["flit_core>=3.4"]
                build-backend = "flit_core.buildapi"
                [project]
                name = "broken"
                dynamic = ["version", "description"]
                [project.optional-dependencies]
                test = ["pytest"]
            """,
            # A version flit does not read from the source (only from `_version.py` and the
            # like): it imports the package for it.
            "broken/__init__.py": '"""A package."""\n\nfrom .core import f\nfrom .package_data import __version__\n',
            "broken/package_data.py": '__version__ = "1.0"\n',
            "broken/core.py": "def f(x:\n    return x\n",
            "tests/test_f.py": "from broken import f\n\n\ndef test_f():\n    assert f(1) == 1\n",
        },
    )
    report = installed_and_verified(repo, tmp_path)
    assert report["status"] == "FAILED", report["note"]
    assert report["extra"]["install"][-1]["verdict"] == "fail"
    assert "broken/core.py:1" in report["note"], report["note"]


@pytest.mark.slow
def test_dependency_groups_are_installed_by_a_pip_that_predates_them(tmp_path: Path) -> None:
    """The venv's own pip (23.x here) has no `--group`: the groups' requirements, includes
    resolved, are passed to it as plain requirements, and the suite then runs."""
    repo = write_dedented(
        tmp_path / "repo",
        {
            "pyproject.toml": """
                [project]
                name = "grouped"
                version = "0.1"
                [dependency-groups]
                test = [{include-group = "runner"}]
                runner = ["pytest"]
                [tool.pytest.ini_options]
                pythonpath = ["."]
            """,
            "grouped.py": "def double(x):\n    return 2 * x\n",
            "tests/test_grouped.py": (
                "from grouped import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
            ),
        },
    )
    report = installed_and_verified(repo, tmp_path)
    steps = {step["name"]: step for step in report["extra"]["install"]}
    assert steps["install-python-groups"]["argv"][-1] == "pytest"
    assert report["status"] == "VERIFIED", report["note"]


def test_a_missing_python_tool_note_names_the_command_for_the_environment_in_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real virtualenv without mypy or flake8 in it: the note says how to put them there,
    not "check that .venv/bin/python is a working mypy" or "put it on PATH"."""
    from assay.check_execution import run_check
    from assay.evidence import Check
    from assay.verdict import Cause

    repo = write(tmp_path / "repo", {"pyproject.toml": "[tool.mypy]\n", "m.py": "x = 1\n"})
    subprocess.run([sys.executable, "-m", "venv", str(repo / ".venv")], check=True)
    bare = write(tmp_path / "bare", {"pyproject.toml": "[tool.mypy]\n"})
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # not the venv assay itself runs from

    def note(root: Path, argv: tuple[str, ...], tool: str | None) -> str:
        check = Check(name="c", kind=Kind.LINT, argv=argv, tool=tool)
        evidence = run_check(check, root=root)
        assert evidence.cause is Cause.TOOLCHAIN_MISSING
        return evidence.note

    in_venv = "is not installed in .venv: `.venv/bin/pip install {}`"
    assert note(repo, (".venv/bin/python", "-m", "mypy", "."), "mypy").endswith(
        in_venv.format("mypy")
    )
    assert note(repo, ("flake8", "src"), "shell").endswith(in_venv.format("flake8"))
    assert note(repo, ("mypy", "."), "mypy").endswith(in_venv.format("mypy"))
    assert "`assay verify --install`" in note(bare, ("mypy", "."), "mypy")
    # A runner that is there but broken is not "not installed".
    purelib = subprocess.run(
        [
            str(repo / ".venv/bin/python"),
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    write(Path(purelib), {"pytest/__init__.py": "import a_dependency_that_is_gone\n"})
    broken = note(repo, (".venv/bin/python", "-m", "pytest"), "pytest")
    assert "not installed" not in broken and "working pytest" in broken
    # Anything else keeps its declaration's hint.
    assert note(bare, ("no-such-tool", "x"), None) == "install no-such-tool or put it on PATH"


#: tqdm 4.70.1's tox deps: one from GitHub, for a command assay does not plan (`--nbval`).
URL_DEPS = {
    "pyproject.toml": '[project]\nname = "p"\nversion = "1"\n',
    "p.py": "def double(x):\n    return 2 * x\n",
    "tests/test_p.py": "from p import double\n\n\ndef test_double():\n    assert double(2) == 4\n",
    "tox.ini": (
        "[testenv]\ndeps =\n    pytest\n    git+https://github.invalid/casperdcl/nbval\n"
        "commands = pytest\n"
    ),
}


def test_a_requirement_named_by_url_does_not_void_the_others(tmp_path: Path) -> None:
    write(tmp_path, URL_DEPS)
    (step,) = [s for s in install_steps(tmp_path) if s.name == "install-python-tox"]
    assert step.argv[:2] == ("sh", "-c")
    # The whole list first; the others alone if that fails.
    assert step.argv[-2:] == ("pytest", "git+https://github.invalid/casperdcl/nbval")
    assert ".venv/bin/python -m pip install -q pytest;" in step.argv[2]


@pytest.mark.slow
def test_an_unreachable_url_requirement_is_installed_around_for_real(tmp_path: Path) -> None:
    report = installed_and_verified(write(tmp_path / "repo", URL_DEPS), tmp_path)
    assert report["status"] == "VERIFIED", report["note"]


def test_setup_py_tests_require_is_installed_and_never_run(tmp_path: Path) -> None:
    """pyrsistent 0.20.0 names hypothesis only in setup.py's `tests_require`. setup.py is
    read with ast, never run: a call beside `setup()` would run on the host otherwise."""
    write(
        tmp_path,
        {
            "setup.py": (
                "import os\nfrom setuptools import setup\nos.system('touch ran')\n"
                "setup(name='p', tests_require=['pytest<9', 'hypothesis<7', 42, '--index-url=x'])\n"
            ),
        },
    )
    (step,) = [s for s in install_steps(tmp_path) if s.name == "install-python-tests-require"]
    assert step.argv[-2:] == ("pytest<9", "hypothesis<7")
    assert not (tmp_path / "ran").exists()


#: referencing 0.37.0: a test-requirements.txt compiled by uv names the project itself by a
#: relative `file:` URL, which pip refuses for the whole file ("Invalid requirement").
UV_COMPILED = {
    "pyproject.toml": '[project]\nname = "p"\nversion = "1"\n',
    "p.py": "def double(x):\n    return 2 * x\n",
    "tests/test_p.py": "from p import double\n\n\ndef test_double():\n    assert double(2) == 4\n",
    "test-requirements.txt": (
        "# This file was autogenerated by uv via the following command:\n"
        "#    uv pip compile --output-file test-requirements.txt test-requirements.in\n"
        "iniconfig==2.1.0\n    # via pytest\n"
        "p @ file:.\n    # via -r test-requirements.in\n"
        'pytest==8.4.2 ; python_version >= "3.9"\n    # via -r test-requirements.in\n'
    ),
}


def test_a_requirement_file_naming_the_project_by_a_relative_url_is_given_line_by_line(
    tmp_path: Path,
) -> None:
    write(tmp_path, UV_COMPILED)
    (step,) = [s for s in install_steps(tmp_path) if s.name == "install-python-test-requirements"]
    assert step.argv[-3:] == ("iniconfig==2.1.0", ".", 'pytest==8.4.2 ; python_version >= "3.9"')
    # With an option pip must read in the file, or a path out of the tree: the file as it is.
    for text in ("-r base.txt\np @ file:.\n", "p @ file:../elsewhere\n"):
        write(tmp_path, {"test-requirements.txt": text})
        (step,) = [
            s for s in install_steps(tmp_path) if s.name == "install-python-test-requirements"
        ]
        assert step.argv[-2:] == ("-r", "test-requirements.txt")


@pytest.mark.slow
def test_a_uv_compiled_requirement_file_installs_for_real(tmp_path: Path) -> None:
    report = installed_and_verified(write(tmp_path / "repo", UV_COMPILED), tmp_path)
    assert report["status"] == "VERIFIED", report["note"]


@pytest.mark.slow
def test_an_install_step_that_fails_is_told_by_the_error_it_printed(tmp_path: Path) -> None:
    files = {**UV_COMPILED, "test-requirements.txt": "p @ file:../out-of-the-tree\n"}
    report = installed_and_verified(write(tmp_path / "repo", files), tmp_path)
    assert report["status"] == "INDETERMINATE", report["note"]
    assert report["note"].startswith(
        "install step install-python-test-requirements did not succeed (exited 1: "
        "ERROR: Invalid requirement: 'p @ file:../out-of-the-tree'"
    ), report["note"]


@pytest.mark.slow
def test_a_build_backend_that_fails_is_told_by_its_own_error_not_pips(tmp_path: Path) -> None:
    """zipp's build backend fetches a license text from the network; pip's last error line
    says only "error: subprocess-exited-with-error". The note quotes the backend's error,
    with the repository's files named from it, not from the sandbox's workspace."""
    backend = (
        "import os\n\n\n"
        "def get_requires_for_build_wheel(config_settings=None):\n"
        "    raise RuntimeError(f'no license for {os.getcwd()}/LICENSE')\n\n\n"
        "get_requires_for_build_editable = get_requires_for_build_wheel\n"
    )
    files = {
        **UV_COMPILED,
        "pyproject.toml": (
            '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n'
            '[project]\nname = "p"\nversion = "1"\n'
        ),
        "backend.py": backend,
    }
    report = installed_and_verified(write(tmp_path / "repo", files), tmp_path)
    assert report["status"] == "INDETERMINATE", report["note"]
    assert "(exited 1: RuntimeError: no license for LICENSE)" in report["note"], report["note"]


def test_a_package_manager_that_is_not_here_is_a_missing_step_not_a_failure(
    tmp_path: Path,
) -> None:
    """vercel/ms names pnpm in `packageManager`; where no pnpm is on PATH, and the release
    it names cannot be fetched from npm either (assay fetches it, `assay.package_managers`),
    the install says which tool to install and why it was not fetched, and the result is
    UNVERIFIED, not an install that "did not succeed"."""
    repo = write(
        tmp_path / "repo",
        {
            "package.json": (
                '{"name": "x", "version": "1.0.0", "packageManager": "pnpm@99.99.99",'
                ' "scripts": {"test": "node --test"}}'
            ),
            "pnpm-lock.yaml": "lockfileVersion: '9.0'\n",
            "test/a.test.js": "require('node:test')('a', () => {})\n",
        },
    )
    # No pnpm, whatever the machine has: its directories are left off PATH (corepack's
    # shim included); what the sandbox needs must stay.
    path = os.pathsep.join(
        d for d in os.environ.get("PATH", "").split(os.pathsep) if not os.path.exists(f"{d}/pnpm")
    )
    assert shutil.which("bwrap", path=path) is not None, "bwrap shares a directory with pnpm"
    env = {**os.environ, "PATH": path, "ASSAY_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(
        [str(Path(sys.executable).parent / "assay"), "verify", "--install", "--json", str(repo)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    report = json.loads(done.stdout)
    assert report["status"] == "UNVERIFIED", report["note"]
    assert report["note"] == (
        "install step install-node could not run: no pnpm found (tried pnpm); install pnpm "
        "or put it on PATH (npm could not fetch pnpm@99.99.99: notarget No matching version "
        "found for pnpm@99.99.99.); the checks were not run. Install it, then verify again."
    ), report["note"]


def flit_project(module: str) -> dict[str, str]:
    """A package built by flit_core, which parses `module` (its `__init__.py`) for the
    docstring and version while pip installs it."""
    return {
        "pyproject.toml": """
            [build-system]
            requires = ["flit_core>=3.2"]
            build-backend = "flit_core.buildapi"
            [project]
            name = "doubler"
            dynamic = ["version", "description"]
            [project.optional-dependencies]
            test = ["pytest"]
        """,
        "doubler/__init__.py": module,
        "tests/test_double.py": """
            from doubler import double


            def test_double():
                assert double(2) == 4
        """,
    }


@pytest.mark.slow
def test_a_module_the_build_backend_cannot_parse_fails_where_it_does_not_compile(
    tmp_path: Path,
) -> None:
    """tabulate 0.10 with a syntax error in its `__init__.py`: flit_core's `ast.parse` fails
    while pip installs it, its traceback naming the file `"<unknown>"`. The compile check
    runs anyway and names the file and line: FAILED, not an install that did not succeed.
    Without the error, the same project verifies."""
    module = '"""Doubles."""\n\n__version__ = "1.0"\n\ndef double(:\n    return 2 * x\n'
    repo = write_dedented(tmp_path / "broken", flit_project(module))
    report = installed_and_verified(repo, tmp_path)
    assert report["status"] == "FAILED", report["note"]
    assert "doubler/__init__.py:5" in report["note"], report["note"]
    install = next(c for c in report["checks"] if c["name"] == "install-python")
    assert install["verdict"] == "inconclusive", install
    assert "doubler/__init__.py:5" in install["note"], install["note"]

    fixed = module.replace("def double(:", "def double(x):")
    repo = write_dedented(tmp_path / "fixed", flit_project(fixed))
    report = installed_and_verified(repo, tmp_path)
    assert report["status"] == "VERIFIED", report["note"]


#: sortedcontainers 2.4: its requirements.txt lists what its benchmarks compare against
#: (blist, which no longer builds); its tox and CI install only pytest.
DEVELOPERS_LIST = {
    "pyproject.toml": '[project]\nname = "p"\nversion = "1"\n',
    "p.py": "def double(x):\n    return 2 * x\n",
    "tests/test_p.py": "from p import double\n\n\ndef test_double():\n    assert double(2) == 4\n",
    "requirements.txt": "pytest\nassay-no-such-distribution-anywhere==1.0\n",
    "tox.ini": "[testenv]\ndeps = pytest\ncommands = pytest\n",
}


def _requirements_step(root: Path) -> Check:
    (step,) = [s for s in install_steps(root) if s.name == "install-python-requirements"]
    return step


def test_a_requirement_file_ci_never_installs_is_best_effort(tmp_path: Path) -> None:
    write(tmp_path / "listed", DEVELOPERS_LIST)
    step = _requirements_step(tmp_path / "listed")
    assert step.argv[:2] == ("sh", "-c") and "best effort" in (step.reason or ""), step
    # Named where CI installs, it is what the tests run with: its failure stops the install.
    workflow = "steps:\n  - run: pip install -r requirements.txt\n"
    write(tmp_path / "ci", {**DEVELOPERS_LIST, ".github/workflows/test.yml": workflow})
    assert _requirements_step(tmp_path / "ci").argv[:4] == (
        ".venv/bin/python",
        "-m",
        "pip",
        "install",
    )
    # With nothing else saying what the tests need, the file is all there is.
    only = {k: v for k, v in DEVELOPERS_LIST.items() if k != "tox.ini"}
    write(tmp_path / "only", only)
    assert _requirements_step(tmp_path / "only").argv[0] == ".venv/bin/python"


@pytest.mark.slow
def test_a_developers_list_that_does_not_install_leaves_the_tests_to_run(tmp_path: Path) -> None:
    """For real: pip finds no such distribution; the tests tox installs for run anyway."""
    report = installed_and_verified(write(tmp_path / "repo", DEVELOPERS_LIST), tmp_path)
    assert report["status"] == "VERIFIED", report["note"]
    (step,) = [s for s in report["extra"]["install"] if s["name"] == "install-python-requirements"]
    assert "requirements.txt did not install" in step["stderr"]["text"], step["stderr"]
    # A step that passed by falling back says so where it is shown, not only in its output.
    assert step["verdict"] == "pass" and "requirements.txt did not install" in step["note"]


def _fuzzed_crate(root: Path, *, wrong: bool) -> Path:
    """shlex's shape: a crate with no dependencies, and a `fuzz/` workspace CI builds whose
    dependency no index here serves."""
    crate = '[package]\nname = "{}"\nversion = "0.1.0"\nedition = "2021"\n'
    answer = 3 if wrong else 2
    return write_dedented(
        root,
        {
            "Cargo.toml": crate.format("shlexy"),
            "src/lib.rs": "pub fn one() -> u8 { 1 }\n\n#[cfg(test)]\nmod tests {\n"
            f"    #[test]\n    fn adds() {{ assert_eq!(super::one() + 1, {answer}); }}\n}}\n",
            "fuzz/Cargo.toml": crate.format("fuzz")
            + '\n[dependencies]\nassay-no-such-crate-q7 = "1"\n\n[workspace]\n',
            "fuzz/src/lib.rs": "",
            ".github/workflows/test.yml": """
                on: push
                jobs:
                  test:
                    runs-on: ubuntu-latest
                    steps:
                      - run: cargo test
                      - run: cargo build --manifest-path fuzz/Cargo.toml
            """,
        },
    )


def test_each_cargo_manifest_a_planned_check_builds_is_fetched(tmp_path: Path) -> None:
    """shlex 1.3.1's CI also builds `--manifest-path fuzz/Cargo.toml`, a workspace of its
    own whose crates the root's `cargo fetch` never fetched: its check could not build."""
    _fuzzed_crate(tmp_path, wrong=False)
    fetches = [s.argv for s in install_steps(tmp_path) if s.argv[:2] == ("cargo", "fetch")]
    assert fetches == [("cargo", "fetch"), ("cargo", "fetch", "--manifest-path", "fuzz/Cargo.toml")]


def test_which_checks_a_fetch_below_the_root_serves() -> None:
    from assay.install import served_checks
    from assay.tools.go import module_download
    from assay.tools.spec import install_step

    planned = [
        Check(name="go-test", kind=Kind.TEST, argv=("go", "test", "./..."), tool="go"),
        Check(name="go-test-arc", kind=Kind.TEST, argv=("go", "test"), tool="go", cwd="arc"),
        Check(name="cargo-test", kind=Kind.TEST, argv=("cargo", "test"), tool="cargo"),
        Check(
            name="cargo-build",
            kind=Kind.BUILD,
            argv=("cargo", "build", "--manifest-path", "fuzz/Cargo.toml"),
            tool="cargo",
        ),
    ]
    fetch = ("cargo", "fetch", "--manifest-path", "fuzz/Cargo.toml")
    fuzz = install_step("rust-fuzz", fetch, "fuzz/Cargo.toml", "crate dependencies", tool="cargo")
    assert served_checks(fuzz, planned) == {"cargo-build"}
    assert served_checks(module_download("arc"), planned) == {"go-test-arc"}
    # The root's own fetch and download: the whole project needs them.
    root_fetch = install_step("rust", ("cargo", "fetch"), "Cargo.toml", "deps", tool="cargo")
    assert served_checks(root_fetch, planned) is None
    assert served_checks(module_download("."), planned) is None


@pytest.mark.slow
@pytest.mark.parametrize("wrong", [False, True])
def test_a_fetch_only_some_checks_need_leaves_the_others_to_run(
    tmp_path: Path, wrong: bool
) -> None:
    """For real: the fuzz workspace's fetch fails; the crate's own tests run all the same
    (shlex with a wrong value was INDETERMINATE under --install: every check skipped)."""
    report = installed_and_verified(_fuzzed_crate(tmp_path / "repo", wrong=wrong), tmp_path)
    ran = {c["name"]: c["verdict"] for c in report["checks"]}
    assert ran.get("cargo-test") == ("fail" if wrong else "pass"), report["note"]
    assert report["status"] == ("FAILED" if wrong else "INDETERMINATE"), report["note"]
    assert "the checks that need it were not run (cargo-build)" in report["note"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("source", "locked", "status"),
    [
        # path-to-regexp with a paren deleted: its `prepare` builds it with tsc, which stops
        # on the code's text. INDETERMINATE before ("check the lockfile and the network").
        ("export const double = (x: number => x * 2;\n", False, "FAILED"),
        # A type error can come of dependencies' types resolved today: not the code's alone.
        ("export const double = (x: number): string => x * 2;\n", False, "INDETERMINATE"),
        # From a lockfile the types are the ones the project was written against
        # (content-type's `prepare` under `npm ci`: INDETERMINATE before, "not a git
        # repository").
        ("export const double = (x: number): string => x * 2;\n", True, "FAILED"),
        ("export const double = (x: number): number => x * 2;\n", True, "VERIFIED"),
    ],
    ids=["syntax", "types", "types-locked", "clean-locked"],
)
def test_an_install_whose_prepare_stops_on_the_projects_typescript(
    tmp_path: Path, source: str, locked: bool, status: str
) -> None:
    assert shutil.which("tsc") is not None, "tsc is not installed (.ci/run installs it)"
    package = {"name": "x", "version": "1.0.0"}
    lock = {**package, "lockfileVersion": 3, "requires": True, "packages": {"": package}}
    files = {
        "package.json": json.dumps(
            {**package, "scripts": {"prepare": "tsc -p .", "test": "node --test"}}
        ),
        # rootDir: TypeScript 6 on refuses a configuration that leaves it out (TS5011).
        "tsconfig.json": (
            '{"compilerOptions": {"outDir": "dist", "rootDir": "src"}, "include": ["src"]}'
        ),
        "src/index.ts": source,
        "test/a.test.js": "require('node:test')('a', () => {})\n",
    }
    if locked:
        files["package-lock.json"] = json.dumps(lock)
    repo = write_dedented(tmp_path / "repo", files)
    done = subprocess.run(
        [str(Path(sys.executable).parent / "assay"), "verify", "--install", "--json", str(repo)],
        capture_output=True,
        text=True,
        env={**os.environ, "ASSAY_CACHE_DIR": str(tmp_path / "cache")},
        timeout=300,
        check=False,
    )
    report = json.loads(done.stdout)
    assert report["status"] == status, report["note"]
    if status == "FAILED":
        assert report["note"].startswith(
            "install step install-node failed on the project's own code: src/index.ts:1: "
        ), report["note"]
    if status == "INDETERMINATE":
        # The type error is named, not the last error line another script printed.
        assert report["note"].startswith(
            "install step install-node did not succeed: src/index.ts:1: "
        ), report["note"]


#: installer's noxfile: its test session installs the project, then the tests' requirement
#: file (pytest-xdist, for the `-n auto` it runs with); its docs session is no check.
NOXFILE_INSTALLS = {
    "pyproject.toml": '[project]\nname = "p"\nversion = "1"\n',
    "tests/requirements.txt": "pytest\npytest-xdist\n",
    "docs/requirements.txt": "sphinx\n",
    "noxfile.py": (
        "import nox\n\n\n@nox.session(python=['3.11'])\ndef test(session):\n"
        "    session.install('.')\n    session.install('-r', 'tests/requirements.txt')\n"
        "    session.install('coverage[toml]', '-e', '.')\n"
        "    session.run('pytest', '-n', 'auto')\n\n\n"
        "@nox.session\ndef docs(session):\n    session.install('-r', 'docs/requirements.txt')\n"
    ),
}


def test_a_nox_sessions_installs_are_the_tests_requirements(tmp_path: Path) -> None:
    write(tmp_path, NOXFILE_INSTALLS)
    (step,) = [s for s in install_steps(tmp_path) if s.name == "install-python-nox"]
    assert step.argv[-3:] == ("-r", "tests/requirements.txt", "coverage[toml]"), step.argv
    assert "docs/requirements.txt" not in step.argv and "." not in step.argv


def test_a_fifo_for_the_environments_pyvenv_cfg_is_not_waited_on(tmp_path: Path) -> None:
    """A red team's: the note for a tool missing from the tree's `.venv` read its
    pyvenv.cfg on the host with a plain read, which waited forever on a fifo (and would
    read a link to /dev/zero until memory ran out). It is read as the tree's files are."""
    import threading

    from assay.install import _pip

    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    os.mkfifo(tmp_path / ".venv" / "pyvenv.cfg")
    said: list[str] = []
    worker = threading.Thread(target=lambda: said.append(_pip(".venv", tmp_path)), daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():  # let it go before failing
        os.close(os.open(tmp_path / ".venv" / "pyvenv.cfg", os.O_WRONLY | os.O_NONBLOCK))
    assert said == [".venv/bin/python -m pip"]
