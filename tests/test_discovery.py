"""Discovery: detector outcomes, the project's environment, and bad input that must never traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.discovery import (
    DetectorAnswer,
    ProjectEnv,
    ci,
    discover,
    docs,
    make,
    manifests,
    node,
    python,
    python_envs,
)
from assay.discovery import detectors as detectors_module
from assay.discovery.command_lines import recognise, recognise_line
from assay.discovery.files import MAX_FILE_BYTES, RepoFiles, UnreadableFile
from assay.evidence import Check
from assay.plan import Plan, plan, plan_repository
from assay.tools import setup_py, tool_spec
from assay.verdict import Kind
from tests.repos import write, write_dedented

ENV = ProjectEnv(python="python3", python_source="PATH")


def outcomes(root: Path) -> dict[str, DetectorAnswer]:
    return {r.detector: r.outcome for r in discover(root).reports}


def errors_of(root: Path) -> str:
    return "\n".join(discover(root).errors)


# --- detector outcomes ---------------------------------------------------------------


def test_each_detector_answers_found_not_applicable_or_error(tmp_path: Path) -> None:
    write(tmp_path, {"package.json": "{not json", "Makefile": "test:\n\tpytest\n"})
    answers = outcomes(tmp_path)
    assert answers["package.json"] is DetectorAnswer.ERROR
    assert answers["task-runner"] is DetectorAnswer.FOUND
    assert answers["manifests"] is DetectorAnswer.NOT_APPLICABLE
    assert "package.json: not valid JSON" in errors_of(tmp_path)
    assert "line 1" in errors_of(tmp_path)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("package.json", "[1, 2]", "expected a JSON object"),
        ("package.json", '{"scripts": "x"}', "'scripts' must be an object"),
        ("pyproject.toml", "[tool.ruff\n", "not valid TOML"),
        ("setup.cfg", "no section header\n", "not a valid INI file"),
        ("tox.ini", "[testenv\ncommands=x", "not a valid INI file"),
        (".github/workflows/ci.yml", "jobs: [unclosed", "not valid YAML"),
        (".github/workflows/ci.yml", "- just\n- a list\n", "not a workflow"),
        (".gitlab-ci.yml", "a: b: c", "not valid YAML"),
        ("pnpm-workspace.yaml", "packages: [", "not valid YAML"),
        ("Cargo.toml", "[package\n", "not valid TOML"),
        ("go.mod", "go 1.22\n", "no `module` directive"),
        ("noxfile.py", "def (:\n", "not valid Python"),
    ],
)
def test_malformed_files_are_errors_with_a_message(
    tmp_path: Path, name: str, content: str, message: str
) -> None:
    write(tmp_path, {name: content})
    if name == "pnpm-workspace.yaml":
        write(tmp_path, {"package.json": "{}"})
    assert message in errors_of(tmp_path)
    plan_repository(tmp_path)  # and planning still works


def test_binary_garbage(tmp_path: Path) -> None:
    write(
        tmp_path, {"package.json": b"\x00\x01\xff\xfe garbage", "Makefile": b"\xff\xfe\xfd test:\n"}
    )
    text = errors_of(tmp_path)
    assert "package.json: binary content" in text
    assert "Makefile: not UTF-8 text" in text


def test_huge_file_is_refused_without_reading(tmp_path: Path) -> None:
    with open(tmp_path / "package.json", "wb") as handle:
        handle.truncate(200 * 1024 * 1024)  # sparse: 200 MB on paper, nothing on disk
    started = time.perf_counter()
    text = errors_of(tmp_path)
    assert time.perf_counter() - started < 1.0
    assert f"larger than the {MAX_FILE_BYTES} byte limit" in text


def test_symlink_loop_and_outside_link(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    outside = tmp_path / "secret.toml"
    outside.write_text("[tool.pytest.ini_options]\n")
    os.symlink(outside, repo / "pyproject.toml")
    os.symlink(repo / "Makefile", repo / "Makefile")  # a loop onto itself
    os.symlink("tests", repo / "tests2")
    os.symlink(repo, repo / "self")
    text = errors_of(repo)
    assert "pyproject.toml: symlink pointing outside the repository" in text
    assert "Makefile:" in text
    assert plan_repository(repo).checks == ()


def test_unreadable_file(tmp_path: Path) -> None:
    write(tmp_path, {"package.json": "{}"})
    os.chmod(tmp_path / "package.json", 0)
    try:
        if os.geteuid() != 0:
            assert "package.json: permission denied" in errors_of(tmp_path)
            return
        # Root reads everything, unless the capabilities that let it are dropped: run the
        # discovery in a child without them, so the file really cannot be read.
        code = (
            "import sys; from pathlib import Path; from assay.discovery import discover; "
            "print('\\n'.join(discover(Path(sys.argv[1])).errors))"
        )
        done = subprocess.run(
            [
                "setpriv",
                "--bounding-set",
                "-dac_override,-dac_read_search",
                sys.executable,
                "-c",
                code,
                str(tmp_path),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        assert "package.json: permission denied" in done.stdout
    finally:
        os.chmod(tmp_path / "package.json", 0o644)


def test_fifo_is_not_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "Makefile")
    assert "Makefile: not a regular file" in errors_of(tmp_path)


def test_directory_where_a_file_is_expected(tmp_path: Path) -> None:
    (tmp_path / "package.json").mkdir()
    assert "package.json: not a regular file" in errors_of(tmp_path)


def test_root_problems(tmp_path: Path) -> None:
    assert "no such file" in (discover(tmp_path / "nope").root_problem or "")
    write(tmp_path, {"file": "x"})
    assert "not a directory" in (discover(tmp_path / "file").root_problem or "")
    (tmp_path / "empty").mkdir()
    empty = discover(tmp_path / "empty")
    assert empty.root_problem is None and empty.candidates == ()


def test_a_broken_detector_costs_only_its_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(files: RepoFiles, env: ProjectEnv) -> None:
        raise RuntimeError("bug")

    detectors = tuple((n, explode if n == make.NAME else d) for n, d in detectors_module.DETECTORS)
    monkeypatch.setattr(detectors_module, "DETECTORS", detectors)
    write(tmp_path, {"Makefile": "test:\n\tx\n", "pytest.ini": "[pytest]\n"})
    result = discover(tmp_path)
    assert "task-runner detector failed: RuntimeError: bug" in result.errors
    assert plan(result).checks


# --- the project's environment -------------------------------------------------------


def test_environment_detection(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            ".env": "SECRET=1\n",
            "venv/pyvenv.cfg": "",
            "package.json": '{"packageManager": "pnpm@9"}',
        },
    )
    os.makedirs(tmp_path / "venv/bin")
    os.symlink("/nonexistent/python3", tmp_path / "venv/bin/python")  # dangling is fine: lexists
    (tmp_path / "venv/bin/pytest").write_text("")
    os.makedirs(tmp_path / "node_modules/.bin")
    (tmp_path / "node_modules/.bin/eslint").write_text("")
    env = discover(tmp_path).env
    assert env.python == "venv/bin/python" and env.venv_dirs == ("venv",)
    assert env.venv_tools == frozenset({"pytest"})
    assert env.node_bin == "node_modules/.bin" and env.node_tools == frozenset({"eslint"})
    assert env.node_tool("eslint") == "node_modules/.bin/eslint" and env.node_tool("tsc") == "tsc"
    assert (env.package_manager, env.package_manager_source) == (
        "pnpm",
        "package.json packageManager",
    )
    assert env.python_tool("ruff", "check") == ("ruff", "check")  # not in the venv: from PATH
    assert env.python_tool("pytest") == ("venv/bin/python", "-m", "pytest")


def test_pdm_interpreter_inside_the_tree(tmp_path: Path) -> None:
    root = os.path.realpath(tmp_path)
    write(tmp_path, {".pdm-python": f"{root}/.pdm-env/bin/python\n", ".pdm-env/bin/python": ""})
    env = discover(tmp_path).env
    assert (env.python, env.python_source) == (".pdm-env/bin/python", ".pdm-python")


def test_poetry_without_in_tree_venv_says_so(tmp_path: Path) -> None:
    write(
        tmp_path,
        {"poetry.lock": "", "pyproject.toml": "[tool.pytest.ini_options]\n", "tests/test_a.py": ""},
    )
    assert any("virtualenvs.in-project" in n for n in plan_repository(tmp_path).notes)


# --- the command recogniser ------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "kind", "tool"),
    [
        ("pytest -q", Kind.TEST, "pytest"),
        ("uv run --frozen python -m pytest", Kind.TEST, "pytest"),
        ("poetry run mypy src", Kind.TYPECHECK, "mypy"),
        # An option's value is no command (sqlparse's `make lint`).
        ("uv run --group dev ruff check sqlparse/", Kind.LINT, "ruff"),
        ("uv run --python 3.10 --group=dev pytest tests/", Kind.TEST, "pytest"),
        ("CI=1 npx --no-install tsc -p .", Kind.TYPECHECK, "tsc"),
        ("python3 -m unittest discover", Kind.TEST, "unittest"),
        # `-mMODULE` is `-m MODULE` (jsonpointer's `make test`: `python3 -munittest`).
        ("python3 -munittest", Kind.TEST, "unittest"),
        ("python -u -B -m pytest tests", Kind.TEST, "pytest"),
        ("ruff format --check .", Kind.LINT, "ruff"),
        ("go test -race ./...", Kind.TEST, "go-test"),
        ("cargo check --all-targets", Kind.BUILD, "cargo-check"),
        ("pnpm run lint", Kind.LINT, "npm-test"),
        ("yarn test", Kind.TEST, "npm-test"),
        ("make -j4 test", Kind.TEST, "make"),
        ("node --test", Kind.TEST, "node-test"),
        ("./node_modules/.bin/vitest run", Kind.TEST, "vitest"),
        # A tool run from an environment of its own: run from the project's.
        ("uvx ty check src", Kind.TYPECHECK, "ty"),
        ("uvx --from 'ruff==0.5' ruff check .", Kind.LINT, "ruff"),
        ("pipx run --spec mypy==1.10 mypy src", Kind.TYPECHECK, "mypy"),
    ],
)
def test_recognise(line: str, kind: Kind, tool: str) -> None:
    hits = recognise_line(line)
    # The check's name (`go-test`); its tool is the declared one (`go`) the parsers read.
    assert [(h.kind, h.name) for h in hits] == [(kind, tool)]
    assert all(tool_spec(h.tool) is not None for h in hits)


@pytest.mark.parametrize(
    "line",
    [
        "pip install -e .",
        "npm ci",
        "ruff format .",
        "tsc --watch",
        "vitest watch",
        "cd src",
        "echo 'unclosed",
    ],
)
def test_not_a_check(line: str) -> None:
    assert recognise_line(line) == []


@pytest.mark.parametrize(
    ("line", "env"),
    [
        ("python -W error -m pytest", (("PYTHONWARNINGS", "error"),)),
        (
            "python -Werror -W ignore::ImportWarning -m pytest",
            (("PYTHONWARNINGS", "error,ignore::ImportWarning"),),
        ),
        ("python -X dev -m unittest", (("PYTHONDEVMODE", "1"),)),
        ("CI=1 python -Xutf8 -m pytest", (("CI", "1"), ("PYTHONUTF8", "1"))),
    ],
)
def test_interpreter_options_are_kept_as_the_variables_that_mean_the_same(
    line: str, env: tuple[tuple[str, str], ...]
) -> None:
    """The stated strictness stays: `python -W error -m pytest` without `-W error` would
    pass code whose warnings fail the maintainers' run."""
    (hit,) = recognise_line(line)
    assert hit.env == env


@pytest.mark.parametrize(
    "line", ["python -O -m pytest", "python -I -m pytest", "python -X importtime -m pytest"]
)
def test_an_interpreter_option_with_no_such_variable_is_not_taken_apart(line: str) -> None:
    assert recognise_line(line) == []


def test_recognise_chained_and_env() -> None:
    hits = recognise_line("cd web && FOO=1 npm test; mypy .")
    assert [(h.tool, h.env) for h in hits] == [("npm-test", (("FOO", "1"),)), ("mypy", ())]
    assert recognise([]) is None


# --- property-based: every parser, arbitrary input -------------------------------------

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
text_or_decoded_bytes = st.one_of(
    st.text(max_size=400),
    st.binary(max_size=400).map(lambda b: b.decode("utf-8", "replace")),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=10),
        lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4),
        max_leaves=12,
    ).map(json.dumps),
)


@pytest.mark.slow
@FUZZ
@given(text_or_decoded_bytes)
def test_every_parser_survives_arbitrary_text(text: str) -> None:
    manifest, _, _ = node.parse_manifest(text, "package.json")
    if manifest is not None:
        node.script_candidates(manifest, "npm")
    python.find_tool_configs({p: text for p in python.CONFIG_FILES})
    python.test_style([text])
    python_envs.parse_tox(text, "tox.ini", ENV)
    python_envs.parse_tox(text, "tox.toml", ENV)
    python_envs.parse_tox(text, "pyproject.toml", ENV)
    python_envs.parse_noxfile(text, "noxfile.py", ENV)
    make.target_candidates(make.parse_makefile(text), "Makefile", "make", env=ENV)
    make.target_candidates(make.parse_justfile(text), "justfile", "just", env=ENV)
    ci.parse_workflow(text, "ci.yml", ENV)
    ci.parse_gitlab(text, ".gitlab-ci.yml", ENV)
    for system in ci.CI_SYSTEMS:
        ci.parse_ci_file(system, text, system.label, ENV, make.read_makefile(text))
    ci.parse_jenkinsfile(text, "Jenkinsfile", ENV, make.read_makefile(text))
    manifests.cargo_candidates(text)
    manifests.go_candidates(text)
    manifests.tsconfig_candidate(text, ENV)
    docs.doc_candidates(text, "README.md", ENV)
    recognise_line(text)
    setup_py.test_suite(text)
    setup_py.setup_keyword(text, "tests_require")


@pytest.mark.slow
@FUZZ
@given(
    st.sampled_from(
        [
            "package.json",
            "pyproject.toml",
            "setup.cfg",
            "tox.ini",
            "tox.toml",
            "Makefile",
            "justfile",
            ".github/workflows/ci.yml",
            ".gitlab-ci.yml",
            ".travis.yml",
            ".circleci/config.yml",
            "azure-pipelines.yml",
            "Jenkinsfile",
            ".woodpecker/a.yml",
            ".buildkite/pipeline.yml",
            ".drone.yml",
            "Cargo.toml",
            "go.mod",
            "tsconfig.json",
            "README.md",
            "assay.toml",
            "noxfile.py",
            "pnpm-workspace.yaml",
        ]
    ),
    st.binary(max_size=300),
)
def test_discover_and_plan_survive_arbitrary_bytes(
    tmp_path_factory: pytest.TempPathFactory, name: str, data: bytes
) -> None:
    root = tmp_path_factory.mktemp("fuzz")
    write(
        root, {name: data, "package.json": b"{}"} if name == "pnpm-workspace.yaml" else {name: data}
    )
    result = plan(discover(root))
    json.dumps(result.to_dict())


def test_yaml_alias_bomb_is_cheap(tmp_path: Path) -> None:
    bomb = (
        "a: &a [x, x, x, x, x, x, x, x, x]\n"
        + "".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
            for i in range(8)
        )
        + "jobs: {t: {steps: [{run: pytest}]}}\n"
    )
    write(tmp_path, {".github/workflows/ci.yml": bomb})
    started = time.perf_counter()
    assert [c.tool for c in discover(tmp_path).candidates] == ["pytest"]
    assert time.perf_counter() - started < 2


def test_repo_files_stays_inside(tmp_path: Path) -> None:
    files = RepoFiles(str(tmp_path))
    assert files.read_text("absent") is None
    assert files.list_dir("../..") == []
    assert not files.is_file("../../etc/passwd")
    with pytest.raises(UnreadableFile):
        write(tmp_path, {"bin": b"\x00"})
        files.read_text("bin")


@pytest.mark.slow
def test_a_bad_workspace_file_does_not_cost_the_root_scripts(tmp_path: Path) -> None:
    # Nesting deep enough to exhaust the YAML parser's recursion, not just a syntax error.
    write(
        tmp_path,
        {
            "package.json": '{"scripts": {"test": "jest"}}',
            "pnpm-workspace.yaml": "a: " + "[" * 2000,
        },
    )
    result = discover(tmp_path)
    assert "pnpm-workspace.yaml: not valid YAML" in "\n".join(result.errors)
    assert [c.argv for c in result.candidates if c.kind is Kind.TEST] == [("npm", "run", "test")]


@pytest.mark.parametrize(
    "line",
    [
        "pytest || true",
        "ruff check . || :",
        "eslint . || exit 0",
        "jest; true",
        "-pytest",
        "@-pytest",
    ],
)
def test_commands_that_ignore_failures_are_recognised(line: str) -> None:
    from assay.discovery.command_lines import masks_failure

    assert masks_failure(line)


@pytest.mark.parametrize(
    "line", ["pytest -q", "test -f x && pytest", "pytest --maxfail=1", "cargo test -- --nocapture"]
)
def test_ordinary_commands_do_not_count_as_masking(line: str) -> None:
    from assay.discovery.command_lines import masks_failure

    assert not masks_failure(line)


@pytest.mark.parametrize(
    ("line", "packages"),
    [
        ("python -m build", True),
        ("rm -rf dist && python3 -m build --sdist", True),
        ("python setup.py sdist bdist_wheel", True),
        ("twine upload dist/*", True),
        ("uv build", True),
        ("poetry publish --build", True),
        ("python -m pip wheel .", False),
        ("python setup.py build_ext --inplace", False),
        ("poetry run pytest", False),
        ("twine check dist/*", False),
        ("./build --release", False),
        ("uv run python -m build", True),
        ("go build ./...", False),
    ],
)
def test_release_packaging_is_told_from_checks(line: str, packages: bool) -> None:
    from assay.discovery.command_lines import packages_distribution

    assert packages_distribution(line) is packages


def test_a_target_that_packages_a_release_is_no_build_check(tmp_path: Path) -> None:
    """Python-Markdown 3.7's `make build` is `python -m build`: an sdist for PyPI, fetching
    setuptools into an isolated environment. Planned, it failed a pristine tree offline."""
    write(
        tmp_path,
        {
            "makefile": "build:\n\trm -rf dist\n\tpython -m build\n"
            "dist: build\nlint:\n\tflake8 pkg\n",
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "1"\n',
        },
    )
    p = plan_repository(tmp_path)
    names = [c.name for c in p.checks]
    assert "make-build" not in names and "make-dist" not in names, names
    assert "make-lint" in names
    dropped = {d.what: d.reason for d in p.dropped}
    assert "packages or publishes a release" in dropped["make build"]


def test_targets_and_scripts_that_ignore_failures_are_dropped(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "Makefile": "test:\n\t-pytest\nlint:\n\truff check . || true\n",
            "package.json": '{"scripts": {"test": "jest || true"}}',
            "pyproject.toml": "[tool.pytest.ini_options]\n",
        },
    )
    p = plan_repository(tmp_path)
    names = [c.name for c in p.checks]
    assert "make-test" not in names and "make-lint" not in names and "npm-test" not in names
    assert "pytest" in names  # the native command answers the test question instead
    reasons = " ".join(d.reason for d in p.dropped)
    assert "ignores failures" in reasons


# --- tox: the stated command, with its environment ----------------------------------------


def check_of(p: Plan, kind: Kind) -> Check:
    return next(c for c in p.checks if c.kind is kind)


def test_tox_command_and_setenv_outrank_the_configured_runner(tmp_path: Path) -> None:
    """pluggy's tox.ini: the test command sits behind `{env:X:default}`, and setenv carries a
    variable the suite needs; `[pytest]` in the same file must not win over the stated command."""
    write_dedented(
        tmp_path,
        {
            "tox.ini": """
                [tox]
                envlist=linting,py{36,37,38,39}

                [testenv]
                commands=
                  {env:_PLUGGY_TOX_CMD:pytest} {posargs}
                  coverage: coverage report -m
                setenv=
                  _PYTEST_SETUP_SKIP_PLUGGY_DEP=1
                  coverage: _PLUGGY_TOX_CMD=coverage run -m pytest

                [pytest]
                testpaths = testing
            """
        },
    )
    test = check_of(plan_repository(tmp_path), Kind.TEST)
    assert test.argv == ("python3", "-m", "pytest", "-q", "-x")
    assert test.env == {"_PYTEST_SETUP_SKIP_PLUGGY_DEP": "1"}
    assert test.source == "tox.ini:6"


@pytest.mark.parametrize(("path", "prefix"), [("pyproject.toml", "tool.tox."), ("tox.toml", "")])
def test_a_native_tox_command_is_credited_to_its_own_table(
    tmp_path: Path, path: str, prefix: str
) -> None:
    """mdurl's pytest was credited to its `pytest` dependency (line 3 here), well before
    its tox tables: a native table's header was looked for as an INI section's."""
    head = '[project]\nname = "x"\ndependencies = ["pytest"]\n\n' if prefix else ""
    pytest_line = 'commands = [["pytest", "{posargs}"]]'
    mypy_line = 'commands = [["mypy", "src"]]'
    text = (
        f"{head}[{prefix.removesuffix('.') or 'tox'}]\n"
        + 'env_list = ["py3", "lint"]\n\n'
        + f"[{prefix}env_run_base]\n{pytest_line}\n\n"
        + f"[{prefix}env.lint]\n{mypy_line}\n"
    )
    write(tmp_path, {path: text, "src/x.py": "X = 1\n"})
    lines = text.splitlines()
    planned = plan_repository(tmp_path)
    assert check_of(planned, Kind.TEST).source == f"{path}:{lines.index(pytest_line) + 1}"
    assert check_of(planned, Kind.TYPECHECK).source == f"{path}:{lines.index(mypy_line) + 1}"


def test_tox_substitutions_factors_and_screening(tmp_path: Path) -> None:
    write_dedented(
        tmp_path,
        {
            "tox.ini": """
                [base]
                typecheck = mypy src

                [testenv]
                setenv =
                    RUN_INTEGRATION = 1
                    DATA_DIR = {toxinidir}/tests/data
                    py312: ONLY_312 = 1
                    !pure: PURE_PYTHON = 0
                    LD_PRELOAD = {toxinidir}/evil.so
                commands =
                    coverage run -p -m pytest {posargs:"{toxinidir}/tests" --cov=pkg --cov-report term} -p no:randomly
                    sphinx-build -b doctest docs {envtmpdir}/doctest

                [testenv:typing]
                commands = {[base]typecheck}
            """
        },
    )
    p = plan_repository(tmp_path)
    test = check_of(p, Kind.TEST)
    # coverage's wrapper and pytest-cov's options are not the test command; the rest is.
    assert test.argv == ("python3", "-m", "pytest", "tests", "-p", "no:randomly", "-q", "-x")
    assert test.env == {"RUN_INTEGRATION": "1", "DATA_DIR": "tests/data", "PURE_PYTHON": "0"}
    assert any("LD_PRELOAD refused" in n for n in p.notes)
    assert check_of(p, Kind.TYPECHECK).argv == ("mypy", "src")
    assert any("{envtmpdir}" in d.reason for d in p.dropped)


def test_an_environment_named_by_no_known_word_is_read_by_what_it_runs(tmp_path: Path) -> None:
    """sortedcontainers 2.4: CI runs `tox -e rufflint` and `-e ruffformatcheck`, names
    that say nothing by themselves; assay planned `ruff check .` from pyproject.toml, which
    lints the docs the maintainers never lint. A lint or type check such an environment
    runs is taken; its other commands (a build, docs, benchmarks) are not."""
    write_dedented(
        tmp_path,
        {
            "pyproject.toml": "[tool.ruff]\nline-length = 120\n",
            "tox.ini": """
                [testenv]
                commands = pytest

                [testenv:rufflint]
                commands = ruff check {toxinidir}/src

                [testenv:ruffformatcheck]
                commands = ruff format --check {toxinidir}

                [testenv:typecheck2]
                commands = mypy src

                [testenv:bench]
                commands = pytest benchmarks

                [testenv:build-check]
                commands =
                    python -m build
                    twine check dist/*

                [testenv:docs]
                commands = ruff check docs
            """,
        },
    )
    p = plan_repository(tmp_path)
    assert sorted(c.argv for c in p.checks if c.kind is Kind.LINT) == [
        ("ruff", "check", "src"),
        ("ruff", "format", "--check", "."),
    ]
    assert check_of(p, Kind.TYPECHECK).argv == ("mypy", "src")
    assert [c.argv for c in p.checks if c.kind is Kind.TEST] == [
        ("python3", "-m", "pytest", "-q", "-x")
    ]


def test_a_posargs_default_spanning_lines_is_filled_before_commands_are_split(
    tmp_path: Path,
) -> None:
    """filelock 3.16.1: the `{posargs:` default runs over continued lines and into a second
    command. tox fills it, then splits; read line by line, the test command was pytest
    with a literal `{posargs:` argument, which collected nothing."""
    write_dedented(
        tmp_path,
        {
            "tox.ini": """
                [testenv]
                commands =
                    pytest {tty:--color=yes} {posargs: \\
                      --junitxml {toxworkdir}{/}junit.{envname}.xml --cov {envsitepackagesdir}{/}pkg \\
                      tests
                    diff-cover --compare-branch {env:DIFF_AGAINST:origin/main} {toxworkdir}{/}coverage.xml}
                    # a comment with a { is no placeholder
                    python -m doctest README.md
            """
        },
    )
    p = plan_repository(tmp_path)
    test = check_of(p, Kind.TEST)
    assert test.argv == (
        "python3",
        "-m",
        "pytest",
        "--junitxml",
        ".tox/junit.py.xml",
        "tests",
        "-q",
        "-x",
    )
    assert not any("{posargs" in " ".join(c.argv) for c in p.checks)


def test_tox_environments_only_env_list_names_take_their_factors_lines(tmp_path: Path) -> None:
    """attrs 24.3.0: its type check is `py3{10,11,12,13}-mypy`, which no section defines;
    tox runs the bare [testenv] with the `mypy:` lines. Read by sections alone, assay had
    planned `mypy src` from pyproject.toml, which the maintainers do not run."""
    write_dedented(
        tmp_path,
        {
            "tox.ini": """
                [tox]
                env_list =
                    py3{10,11,12}-tests,
                    py3{11,12}-mypy, lint
                [testenv]
                extras =
                    tests: tests
                    mypy: tests-mypy
                commands =
                    tests: pytest {posargs:-n auto}
                    mypy: mypy tests/typing_example.py
                [testenv:lint]
                commands = flake8 src
            """,
            "pyproject.toml": '[project]\nname = "p"\nversion = "1"\n[tool.mypy]\nstrict = true\n',
        },
    )
    p = plan_repository(tmp_path)
    typecheck = check_of(p, Kind.TYPECHECK)
    assert typecheck.argv == ("mypy", "tests/typing_example.py")
    assert "py311-mypy (from [testenv]" in typecheck.reason
    assert check_of(p, Kind.TEST).argv[:5] == ("python3", "-m", "pytest", "-n", "auto")
    assert check_of(p, Kind.LINT).argv == ("flake8", "src")
    # One candidate per command, not one per interpreter that states it.
    assert sum("tests/typing_example.py" in d.what for d in p.dropped) == 0


def test_tox_environments_env_list_names_come_in_its_order(tmp_path: Path) -> None:
    """pyparsing 3.2: `[testenv:py314t-unit]` (a free-threaded interpreter, PYTHON_GIL=0)
    is a section of its own, and sections were read before env_list: its pytest, with
    PYTHON_GIL=0, was planned, which a Python without free threading refuses to start."""
    write_dedented(
        tmp_path,
        {
            "tox.ini": """
                [tox]
                envlist = py{310,311,314t}-{unit}, py{38,39}-lint
                [testenv]
                commands = unit: pytest tests
                [testenv:py314t-unit]
                base_python = python3.14t
                setenv = PYTHON_GIL = 0
                [testenv:py{38,39}-lint]
                commands = flake8 src
                [testenv:docs]
                commands = sphinx-build docs out
            """,
        },
    )
    p = plan_repository(tmp_path)
    test = check_of(p, Kind.TEST)
    assert "PYTHON_GIL" not in test.env
    assert "py310-unit (from [testenv]" in test.reason, test.reason
    assert check_of(p, Kind.LINT).argv == ("flake8", "src")


def test_tox_envs_and_nox_sessions_that_run_no_check_are_left_out_with_a_reason(
    tmp_path: Path,
) -> None:
    """cachetools 8.0.2: env_list names `docs` and `doctest` (`sphinx-build -b doctest`);
    both were left out without a trace in the plan's dropped entries."""
    write_dedented(
        tmp_path,
        {
            "tox.ini": """
                [tox]
                envlist = py, docs, doctest
                [testenv]
                commands = pytest tests
                [testenv:docs]
                commands = sphinx-build -W -b html docs {envtmpdir}/html
                [testenv:doctest]
                commands = sphinx-build -W -b doctest docs {envtmpdir}/doctest
            """,
            "noxfile.py": """
                import nox

                @nox.session
                def bench(session):
                    session.run("python", "bench.py")
            """,
        },
    )
    p = plan_repository(tmp_path)
    assert "tests" in check_of(p, Kind.TEST).argv
    dropped = {str(d.source): (d.what, d.reason) for d in p.dropped}
    what, why = dropped["tox.ini:5"]
    assert what == "tox env docs" and "documentation" in why, dropped
    what, why = dropped["tox.ini:8"]
    assert what.startswith("sphinx-build -W -b doctest") and "doctest's name" in why, why
    assert dropped["noxfile.py:4"][0] == "nox session bench", dropped


def test_a_tox_env_that_pins_an_interpreter_is_credited_with_the_one_that_runs(
    tmp_path: Path,
) -> None:
    """tabulate 0.10.0: `[testenv:py38]` (basepython = python3.8) states `[testenv]`'s
    command again. Its check was credited to py38, at the line of `[testenv]`'s copy, and
    ran on the machine's Python without saying so."""
    write_dedented(
        tmp_path,
        {
            "tox.ini": """
                [tox]
                envlist = py38, py39
                [testenv]
                commands = pytest -v tests
                [testenv:py38]
                basepython = python3.8
                commands = pytest -v tests
            """,
        },
    )
    test = check_of(plan_repository(tmp_path), Kind.TEST)
    assert str(test.source) == "tox.ini:7", test.source
    assert "run with python3 where tox would use python3.8" in test.reason, test.reason


@pytest.mark.parametrize(
    ("stated", "name", "interpreter"),
    [
        ("", "py38", "python3.8"),
        ("", "py312-unit", "python3.12"),
        ("", "pypy310", "pypy3.10"),
        ("", "py3", "python3"),
        ("", "lint", ""),
        ("", "py", ""),
        ("python3.12", "py38", "python3.12"),
        ("{env:PY}", "py311", "python3.11"),
    ],
)
def test_the_interpreter_a_tox_env_would_use(stated: str, name: str, interpreter: str) -> None:
    from assay.tools.tox_config import read_tox

    setting = f"basepython = {stated}\n" if stated else ""
    ini, _ = read_tox(
        "tox.ini", f"[tox]\nenvlist = {name}\n[testenv]\n{setting}commands = pytest\n"
    )
    toml_setting = f'base_python = ["{stated}", "python3"]\n' if stated else ""
    native, _ = read_tox(
        "tox.toml",
        f'env_list = ["{name}"]\n[env_run_base]\n{toml_setting}'
        f'[env."{name}"]\ncommands = [["pytest"]]\n',
    )
    assert ini is not None and native is not None
    assert [e.base_python for e in ini.envs if e.name == name] == [interpreter]
    assert [e.base_python for e in native.envs if e.name == name] == [interpreter]


@pytest.mark.parametrize(
    ("envlist", "stale"),
    [
        ("py26,py27,py33,py37,pypy", True),
        ("py27, py{35,36}-unit", True),
        ("py27,py37,py38", False),
        ("py27,py3", False),
        ("lint", False),
    ],
)
def test_a_tox_configuration_for_pythons_long_gone_yields_to_ci(
    tmp_path: Path, envlist: str, stale: bool
) -> None:
    """jmespath 1.0.1: tox.ini lists py26 to py37 and runs `nosetests`, which no Python
    since 3.10 can run; the CI runs pytest on 3.7 to 3.11. tox's command outranked CI's, and
    the pristine tree FAILED inside nose."""
    write_dedented(
        tmp_path,
        {
            "tox.ini": f"""
                [tox]
                envlist = {envlist}
                [testenv]
                commands = nosetests
            """,
            ".github/workflows/ci.yml": """
                on: push
                jobs:
                  test:
                    runs-on: ubuntu-latest
                    steps:
                      - run: cd tests/ && py.test
            """,
            "tests/test_it.py": "def test_it():\n    pass\n",
        },
    )
    p = plan_repository(tmp_path)
    test = check_of(p, Kind.TEST)
    assert (test.tool == "pytest") is stale, test
    # Without CI, the tests assay finds itself outrank it too; alone, it is still run.
    (tmp_path / ".github/workflows/ci.yml").unlink()
    assert (check_of(plan_repository(tmp_path), Kind.TEST).tool == "pytest") is stale
    (tmp_path / "tests/test_it.py").unlink()
    alone = check_of(plan_repository(tmp_path), Kind.TEST)
    assert alone.argv == ("nosetests",), alone
    assert ("names no Python after" in alone.reason) is stale, alone.reason


def test_a_generative_tox_section_is_each_environment_it_names(tmp_path: Path) -> None:
    """structlog 25: `[testenv:typing-{mypy,pyright}]` holds `mypy: mypy src`; read as one
    environment named with its braces, no factor matched and `mypy src` was never planned.
    Beside the `mypy tests/typing` another environment runs, it is a check of its own: it
    checks other code (a wrong return annotation in src/ was VERIFIED)."""
    write_dedented(
        tmp_path,
        {
            "tox.ini": """
                [tox]
                env_list = py311-{tests,mypy}, typing-{mypy,pyright}
                [testenv]
                commands =
                    tests: pytest
                    mypy: mypy tests/typing
                [testenv:typing-{mypy,pyright}]
                commands =
                    mypy: mypy src
                    pyright: pyright src
            """,
        },
    )
    p = plan_repository(tmp_path)
    typechecks = {c.name: " ".join(c.argv) for c in p.checks if c.kind is Kind.TYPECHECK}
    assert typechecks == {"mypy": "mypy tests/typing", "mypy-src": "mypy src"}
    assert "typing-mypy" not in {d.what for d in p.dropped}


def test_a_mypy_variant_on_many_files_is_named_by_their_paths_cut_short(tmp_path: Path) -> None:
    """attrs 26.1's tox runs `mypy typing-examples`, then mypy on nine `.pyi` files: the
    second check's name spelt out every file, and the first two only by their base names
    (`mypy-__init__.pyi-__init__.pyi-...`)."""
    stubs = " ".join(f"src/attr/m{i}.pyi" for i in range(9))
    tox = f"[tox]\nenv_list = mypy\n[testenv]\ncommands =\n    mypy typing-examples\n    mypy src/attrs/__init__.pyi {stubs}\n"
    other = tox.replace("src/attr/m8.pyi", "src/attr/m9.pyi")
    names = []
    for at, text in enumerate((tox, other)):
        root = tmp_path / str(at)
        write(root, {"tox.ini": text})
        p = plan_repository(root)
        (name,) = [c.name for c in p.checks if c.kind is Kind.TYPECHECK and c.name != "mypy"]
        names.append(name)
    assert all(n.startswith("mypy-src-attrs-__init__.pyi-src-") and len(n) <= 50 for n in names)
    assert names[0] != names[1], names  # cut alike, told apart by the whole


def test_a_range_in_a_generative_tox_name_is_spelt_out(tmp_path: Path) -> None:
    """structlog's env_list says `3.1{0-5}-{tests,mypy}`: tox 4 reads 3.10 to 3.15."""
    from assay.tools.tox_config import _generated

    assert list(_generated("3.1{0-2}-{tests,mypy}")) == [
        "3.10-tests",
        "3.10-mypy",
        "3.11-tests",
        "3.11-mypy",
        "3.12-tests",
        "3.12-mypy",
    ]
    assert list(_generated("x-{a-b}")) == ["x-a-b"]  # not numbers: a name as written
    write_dedented(
        tmp_path,
        {"tox.ini": "[tox]\nenv_list = 3.1{0-5}-tests\n[testenv]\ncommands = tests: pytest\n"},
    )
    assert "tox env 3.10-tests" in check_of(plan_repository(tmp_path), Kind.TEST).reason


def test_spaces_among_a_generative_names_alternatives_are_no_part_of_them(
    tmp_path: Path,
) -> None:
    """tabulate's `envlist = lint, py{38, 39, 310}`: tox strips each alternative. Kept, the
    spaces made `py 39`, no env of tox's, and `py{311, 312}-{unit, slow}` lost its `slow:`
    command without a trace."""
    from assay.tools.tox_config import _generated

    assert list(_generated("py{38, 39}-{unit, slow}")) == [
        "py38-unit",
        "py38-slow",
        "py39-unit",
        "py39-slow",
    ]
    write_dedented(
        tmp_path,
        {
            "tox.ini": "[tox]\nenvlist = py{311, 312}-{unit, slow}\n"
            "[testenv]\ncommands =\n    slow: pytest -m slow\n",
        },
    )
    test = check_of(plan_repository(tmp_path), Kind.TEST)
    assert test.argv[-4:-2] == ("-m", "slow"), test.argv
    assert "tox env py311-slow" in test.reason


def test_a_coverage_report_after_the_tests_is_no_test_check(tmp_path: Path) -> None:
    """filelock 3.16.1: [testenv] runs pytest (with `{envsitepackagesdir}`, which only tox
    knows), then `diff-cover` against origin/main. diff-cover was planned as a test, and
    failed outside a git clone."""
    write_dedented(
        tmp_path,
        {
            "tox.ini": """
                [testenv]
                commands =
                    pytest --cov {envsitepackagesdir}/pkg tests
                    diff-cover --compare-branch origin/main {toxworkdir}{/}coverage.xml
            """,
            "pyproject.toml": "[tool.pytest.ini_options]\n",
        },
    )
    p = plan_repository(tmp_path)
    assert [c.argv[:3] for c in p.checks if c.kind is Kind.TEST] == [("python3", "-m", "pytest")]


def test_the_suite_is_chosen_over_the_doc_tests_listed_before_it(tmp_path: Path) -> None:
    """natsort 8.4.0's [testenv]: a doctest of a doc file, pytest over README.rst, then the
    suite with `--cov {envsitepackagesdir}/natsort`. The placeholder, in a coverage option
    assay leaves out anyway, had dropped the suite; the doc file's doctest was planned, and
    found no examples in it."""
    write_dedented(
        tmp_path,
        {
            "tox.ini": """
                [testenv]
                commands =
                    {envpython} -m doctest -o IGNORE_EXCEPTION_DETAIL docs/howitworks.rst
                    pytest README.rst docs/examples.rst
                    pytest --tb=short --cov {envsitepackagesdir}/natsort --cov-report term-missing {posargs:}
            """,
        },
    )
    test = check_of(plan_repository(tmp_path), Kind.TEST)
    assert test.argv == ("python3", "-m", "pytest", "--tb=short", "-q", "-x")


def test_env_list_names_are_expanded_lazily_and_bounded() -> None:
    from assay.tools.tox_config import MAX_LISTED_ENVS, read_tox

    huge = "-".join("{a,b,c,d,e,f,g,h,i,j}" for _ in range(30))  # 10**30 names
    config, _ = read_tox("tox.ini", f"[tox]\nenvlist = {huge}, py3\n[testenv]\ncommands = x\n")
    assert config is not None
    assert len(config.envs) == 1 + MAX_LISTED_ENVS


def test_nox_sessions_named_with_underscores_are_read_by_their_names(tmp_path: Path) -> None:
    """stamina: CI type-checks with nox's `mypy_pkg` (`mypy src tests/typing noxfile.py`);
    read by `-` alone, the name said no kind, the session was dropped, and a type error in
    `tests/typing` was VERIFIED."""
    write_dedented(
        tmp_path,
        {
            "noxfile.py": """
                import nox

                @nox.session(tags=["typing"])
                def mypy_pkg(session):
                    session.install(".", "mypy")
                    session.run("mypy", "src", "tests/typing")

                @nox.session
                def coverage_report(session):
                    session.run("coverage", "report")
            """,
            "src/eg/__init__.py": "",
        },
    )
    p = plan_repository(tmp_path)
    assert check_of(p, Kind.TYPECHECK).argv == ("mypy", "src", "tests/typing")
    assert all("coverage" not in " ".join(c.argv) for c in p.checks)


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("py312-mypy", Kind.TYPECHECK),
        ("py311-lint", Kind.LINT),
        ("py-typing", Kind.TYPECHECK),
        ("py312", Kind.TEST),
        ("py312-tests", Kind.TEST),
        ("pypy3", Kind.TEST),
        ("docs", None),
        # nox sessions are Python functions: stamina's `mypy_pkg`, `typing_api`, `pre_commit`.
        ("mypy_pkg", Kind.TYPECHECK),
        ("typing_api", Kind.TYPECHECK),
        ("pre_commit", Kind.LINT),
        ("coverage_report", None),
    ],
)
def test_a_factor_that_names_a_check_decides_over_the_interpreter(
    name: str, kind: Kind | None
) -> None:
    from assay.tools.env_names import env_kind

    assert env_kind(name) is kind


@pytest.mark.parametrize(
    ("path", "text"),
    [
        (
            "setup.cfg",
            (
                "[metadata]\nname = p\n\n[tox:tox]\nenvlist = py3\n\n"
                "[testenv]\nsetenv = STRICT=1\ncommands = pytest tests/unit\n"
            ),
        ),
        (
            "pyproject.toml",
            (
                '[project]\nname = "p"\n\n[tool.tox]\nlegacy_tox_ini = """\n[tox]\n'
                '[testenv]\nsetenv = STRICT=1\ncommands = pytest tests/unit\n"""\n'
            ),
        ),
        (
            "tox.toml",
            (
                'env_list = ["py3"]\n[env_run_base]\nset_env = { STRICT = "1" }\n'
                'commands = [["pytest", { replace = "posargs", default = ["tests/unit"] }]]\n'
            ),
        ),
    ],
)
def test_tox_configured_outside_tox_ini(tmp_path: Path, path: str, text: str) -> None:
    write(tmp_path, {path: text, "tests/unit/test_a.py": "def test_a(): pass\n"})
    test = check_of(plan_repository(tmp_path), Kind.TEST)
    assert test.argv == ("python3", "-m", "pytest", "tests/unit", "-q", "-x")
    assert test.env == {"STRICT": "1"}
    assert test.source.startswith(path)


# --- tools in the project's own environments ---------------------------------------------


def _executable(path: Path, text: str = "#!/bin/sh\nexit 0\n") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


def test_tools_named_by_tox_and_ci_are_taken_from_the_projects_environments(
    tmp_path: Path,
) -> None:
    """flake8 installed in .venv and mypy in a tox environment: found there, not looked for
    on PATH (where neither is)."""
    from assay.check_execution import locate

    write_dedented(
        tmp_path,
        {
            "tox.ini": """
                [testenv:lint]
                commands = flake8 src
                [testenv:type]
                commands = mypy src
            """,
            ".github/workflows/ci.yml": """
                on: push
                jobs:
                  lint:
                    runs-on: x
                    steps:
                      - run: pylint pkg
            """,
            ".venv/pyvenv.cfg": "",
            ".tox/type/pyvenv.cfg": "",
        },
    )
    (tmp_path / ".venv/bin").mkdir(parents=True)
    os.symlink(sys.executable, tmp_path / ".venv/bin/python")
    for tool in (".venv/bin/flake8", ".venv/bin/pylint", ".tox/type/bin/mypy"):
        _executable(tmp_path / tool)
    p = plan_repository(tmp_path)
    lint, types = check_of(p, Kind.LINT), check_of(p, Kind.TYPECHECK)
    assert lint.argv == (".venv/bin/flake8", "src")
    assert types.argv == (".tox/type/bin/mypy", "src")
    assert locate(lint, root=tmp_path) == str(tmp_path.resolve() / ".venv/bin/flake8")
    ci_lint = [c for c in discover(tmp_path).candidates if c.origin.label == "ci"]
    assert [c.argv for c in ci_lint] == [(".venv/bin/pylint", "pkg")]
    env = discover(tmp_path).env
    assert env.python_tool("flake8", "x") == (".venv/bin/flake8", "x")
    assert env.python_tool("black", "--check") == ("black", "--check")  # installed nowhere


def test_cargo_turns_on_the_features_its_test_targets_require() -> None:
    crate = (
        '[package]\nname = "k"\nversion = "0.1.0"\n[workspace]\n'
        '[[test]]\nname = "a"\nrequired-features = ["keccak", "sha3"]\n'
        '[[test]]\nname = "b"\nrequired-features = ["sha3", "--config=x", "-Zbad"]\n'
    )
    found, errors = manifests.cargo_candidates(crate)
    assert errors == []
    argvs = {c.kind: c.argv for c in found}
    # Qualified in a workspace; a name cargo would read as an option never reaches the argv.
    selection = ("--workspace", "--features", "k/keccak,k/sha3")
    assert argvs[Kind.TEST] == ("cargo", "test", *selection)
    assert argvs[Kind.BUILD] == ("cargo", "check", *selection)
    plain, _ = manifests.cargo_candidates('[package]\nname = "k"\nversion = "0.1.0"\n')
    assert {c.argv for c in plain} == {("cargo", "check"), ("cargo", "test")}


def test_tox_pytest_basetemp_in_envtmpdir_is_left_to_pytest(tmp_path: Path) -> None:
    # cachetools' tox.ini: only tox knows {envtmpdir}, but --basetemp says nothing about which
    # tests run; without it pytest picks its own temporary directory.
    write_dedented(
        tmp_path,
        {
            "tox.ini": """
                [testenv]
                deps = pytest
                commands =
                    py.test --basetemp={envtmpdir} {posargs}
            """,
            "tests/test_cache.py": """
                import unittest


                class CacheTest(unittest.TestCase):
                    def test_get(self):
                        self.assertEqual(1, 1)
            """,
        },
    )
    p = plan_repository(tmp_path)
    test = check_of(p, Kind.TEST)
    assert test.tool == "pytest" and "-m" in test.argv
    assert not any("basetemp" in word for word in test.argv)
    assert not any("{envtmpdir}" in d.reason for d in p.dropped)


def test_a_ci_script_command_after_cd_runs_in_that_directory() -> None:
    # cJSON's CI: `cd build` then `make test` runs CMake's test target in build/, not the
    # root Makefile's; a `cd` assay cannot follow leaves the commands after it out.
    workflow = """
jobs:
  test:
    steps:
      - run: |
          mkdir -p build
          cd build
          cmake ..
          make test
      - run: cd web && npm test && cd ../api && go test ./...
      - run: pytest
      - run: |
          cd "$SRC_DIR"
          go vet ./...
"""
    found, dropped, errors = ci.parse_workflow(workflow, "ci.yml", ENV)
    assert errors == []
    where = {" ".join(c.argv): c.cwd for c in found}
    where.update({c.tool: c.cwd for c in found})
    assert where["make test"] == "build"
    assert where["npm test"] == "web"
    assert where["go test ./..."] == "api"
    assert where["pytest"] == "."  # each step starts where the job does
    assert "go vet ./..." not in where
    assert any("cd" in d.reason for d in dropped if d.what.startswith("go vet"))


def test_the_test_file_search_follows_links_only_inside_the_repository(tmp_path: Path) -> None:
    """The search for a Python test file lists each directory once and takes each entry's
    kind from the listing; a symlink still counts only when it leads inside the root."""
    from assay.discovery.fallback import test_file_anywhere
    from assay.discovery.files import RepoFiles

    outside = tmp_path / "outside"
    (outside / "suite").mkdir(parents=True)
    (outside / "suite" / "test_elsewhere.py").write_text("def test_x(): pass\n")
    (outside / "test_linked.py").write_text("def test_x(): pass\n")
    repo = tmp_path / "repo"
    (repo / "pkg" / "deep").mkdir(parents=True)
    os.symlink(outside / "suite", repo / "aaa_suite")  # a directory outside: not searched
    os.symlink(outside / "test_linked.py", repo / "test_linked.py")  # a file outside: no
    assert test_file_anywhere(RepoFiles(str(repo))) is None
    (repo / "pkg" / "deep" / "test_inner.py").write_text("def test_x(): pass\n")
    os.symlink("pkg", repo / "aaa_pkg")  # a directory inside: searched like any other
    assert test_file_anywhere(RepoFiles(str(repo))) == "aaa_pkg/deep/test_inner.py"


@pytest.mark.parametrize(
    "line",
    [
        # platformdirs' CI: `--notest` builds the environment and runs none of its commands
        "tox -e coverage --notest",
        "tox run -vv --notest --skip-missing-interpreters false -e py312",
        "tox list",
        "tox -l",
        "nox --list",
        "nox -s tests --install-only",
        # environments whose names say they are not the tests: coverage combine, docs
        "tox -e coverage --skip-pkg-install",
        "tox -e docs,pkg_meta",
        "nox -s docs",
    ],
)
def test_tox_and_nox_lines_that_run_no_tests_are_not_test_checks(line: str) -> None:
    assert [h for h in recognise_line(line) if h.kind is Kind.TEST] == []


@pytest.mark.parametrize(
    "line", ["tox", "tox -e py312", "tox run -e 3.14", "tox -e lint,py311", "nox -s tests", "nox"]
)
def test_tox_and_nox_lines_that_run_tests_stay_test_checks(line: str) -> None:
    assert [h.kind for h in recognise_line(line)] == [Kind.TEST]


def test_nox_command_whose_head_is_a_variable_is_resolved_not_truncated(tmp_path: Path) -> None:
    # packaging's noxfile: `session.run(*coverage, "run", "-m", "pytest", *posargs)` with
    # `coverage = ["python", "-m", "coverage"]`; its literal words alone are `run -m pytest`.
    write_dedented(
        tmp_path,
        {
            "noxfile.py": """
                import nox

                PYTEST = ("python", "-m", "pytest")


                @nox.session
                def tests(session):
                    coverage = ["python", "-m", "coverage"]
                    session.run(*coverage, "run", "-m", "pytest", *session.posargs)


                @nox.session
                def unit(session):
                    session.run(*PYTEST, "tests/unit")


                @nox.session
                def tests_elsewhere(session):
                    session.run(*session.posargs, "run", "-m", "pytest")
            """,
            "tests/test_a.py": "def test_a():\n    assert True\n",
        },
    )
    p = plan_repository(tmp_path)
    test = check_of(p, Kind.TEST)
    assert test.tool == "pytest", test.argv
    assert test.argv[:1] != ("run",)
    words = [c.argv for c in p.checks] + [tuple(d.what.split()) for d in p.dropped]
    assert not any(w[:1] == ("run",) for w in words), words
    assert any("computed" in d.reason for d in p.dropped), p.dropped


@pytest.mark.parametrize(
    ("binding", "argument", "words"),
    [
        # referencing 0.37.0: a bare pytest from the root would collect a git submodule's suite.
        ('ROOT = Path(__file__).parent\nCODE = ROOT / "pkg"', "CODE", ("pkg",)),
        (
            'ROOT = Path(__file__).resolve().parent\nCODE = ROOT / "src" / "pkg"',
            "CODE",
            ("src/pkg",),
        ),
        (
            "HERE = os.path.dirname(os.path.abspath(__file__))",
            'os.path.join(HERE, "pkg")',
            ("pkg",),
        ),
        ("ROOT = Path(__file__).parent", 'ROOT.joinpath("pkg")', ("pkg",)),
        ("ROOT = Path(__file__).parent", "ROOT, __file__", (".", "noxfile.py")),
        # Out of the noxfile's directory, or computed: left out, as before.
        ("ROOT = Path(__file__).parent.parent", 'ROOT / "pkg"', ()),
        ("CODE = Path(os.environ['CODE'])", "CODE", ()),
    ],
)
def test_nox_paths_built_from_the_noxfiles_place_are_read(
    tmp_path: Path, binding: str, argument: str, words: tuple[str, ...]
) -> None:
    noxfile = (
        f"import os\nfrom pathlib import Path\nimport nox\n{binding}\n\n"
        f"@nox.session\ndef tests(session):\n    session.run('pytest', {argument})\n"
    )
    write(tmp_path, {"noxfile.py": noxfile, "tests/test_a.py": "def test_a():\n    pass\n"})
    test = check_of(plan_repository(tmp_path), Kind.TEST)
    assert test.argv == ("python3", "-m", "pytest", *words, "-q", "-x")


@pytest.mark.parametrize(
    ("recipe", "planned"),
    [
        # sqlparse 0.6.1: the suite once per Python, each through `uv run`, which would make
        # an environment of its own with the network: pytest runs directly instead.
        (
            (
                "\tuv run --group dev --python 3.10 pytest tests/\n"
                "\tuv run --group dev --python 3.11 pytest tests/\n"
            ),
            ("python3", "-m", "pytest", "tests/", "-q", "-x"),
        ),
        ("\tpoetry run pytest tests/\n", ("python3", "-m", "pytest", "tests/", "-q", "-x")),
        # More than the one check: the target is run as written.
        ("\tuv run pytest tests/\n\tuv run coverage combine\n", ("make", "test")),
        ("\tuv run pytest tests/\n\tuv run pytest docs/\n", ("make", "test")),
        # Not through an environment manager: as written, as ever.
        ("\tpytest tests/\n", ("make", "test")),
    ],
)
def test_a_target_running_one_check_through_an_environment_manager_runs_it_directly(
    tmp_path: Path, recipe: str, planned: tuple[str, ...]
) -> None:
    write(tmp_path, {"Makefile": f"test:\n{recipe}", "tests/test_x.py": "def test_x(): pass\n"})
    assert check_of(plan_repository(tmp_path), Kind.TEST).argv == planned


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        # mccabe 0.7.0's README: how a user runs the plugin on their own project.
        ("flake8 --max-complexity 10 coolproject", False),
        ("ruff check mypkg", False),
        ("python -m pytest tests/ -k 'not slow'", True),
        ("pytest -k expr", True),  # an option's value is no path
        ("mypy src", True),
        ("ruff check .", True),
    ],
)
def test_a_documented_command_on_paths_the_tree_lacks_is_an_example_not_a_check(
    tmp_path: Path, line: str, kept: bool
) -> None:
    write(tmp_path, {"README.md": f"```sh\n{line}\n```\n", "src/m.py": "", "tests/t.py": ""})
    report = next(r for r in discover(tmp_path).reports if r.detector == "docs")
    assert bool(report.candidates) is kept, (report.candidates, report.dropped)
    assert any("which this tree lacks" in d.reason for d in report.dropped) is not kept


@pytest.mark.parametrize(
    ("setup_py", "planned"),
    [
        # humanfriendly 10.0: its tests are humanfriendly/tests.py, named by test_suite.
        ("setup(name='h', test_suite='humanfriendly.tests')", ("humanfriendly.tests",)),
        ("setup(name='h', test_suite='humanfriendly')", ("humanfriendly",)),
        # Not a module of the tree, not a literal, not a dotted name: nothing planned.
        ("setup(name='h', test_suite='elsewhere.tests')", None),
        ("SUITE = 'humanfriendly.tests'\nsetup(name='h', test_suite=SUITE)", None),
        ("setup(name='h', test_suite='humanfriendly.tests; rm -rf /')", None),
    ],
)
def test_setup_py_test_suite_is_run_with_unittest(
    tmp_path: Path, setup_py: str, planned: tuple[str, ...] | None
) -> None:
    write(
        tmp_path,
        {
            "setup.py": f"from setuptools import setup\n{setup_py}\n",
            "humanfriendly/__init__.py": "",
            "humanfriendly/tests.py": "import unittest\n",
        },
    )
    tests = [c for c in plan_repository(tmp_path).checks if c.kind is Kind.TEST]
    if planned is None:
        assert not any(c.tool == "unittest" for c in tests), tests
    else:
        assert [c.argv[3:4] for c in tests] == [planned]


#: jsonpointer 2.4's shape: its tests are `tests.py` at the root, unittest cases that
#: unittest's discovery loads (it matches `test*.py`) and pytest's naming does not.
ROOT_UNITTEST = {
    "setup.py": "from setuptools import setup\nsetup(name='p', py_modules=['p'])\n",
    "p.py": "def double(x):\n    return 2 * x\n",
    "tests.py": (
        "import unittest\nimport p\n\n"
        "class DoubleTests(unittest.TestCase):\n"
        "    def test_double(self):\n        self.assertEqual(p.double(2), 4)\n"
    ),
}


@pytest.mark.parametrize(
    ("extra", "planned"),
    [
        ({}, ("python3", "-m", "unittest")),
        # test.py is found the same way; a test named as pytest collects it keeps pytest.
        ({"tests.py": None, "test.py": ROOT_UNITTEST["tests.py"]}, ("python3", "-m", "unittest")),
        ({"tests.py": None, "test_p.py": ROOT_UNITTEST["tests.py"]}, ("python3", "-m", "pytest")),
        # pytest's style, or no unittest at all: not unittest's to run; pytest's, pointed
        # at it where it defines a test (its name is not one pytest collects by itself).
        (
            {"tests.py": "import pytest\n\ndef test_double():\n    pass\n"},
            ("python3", "-m", "pytest", "tests.py"),
        ),
        ({"tests.py": "CASES = [1, 2]\n"}, None),
        # A test directory or setup.py's test_suite says where the tests are first.
        ({"tests/test_p.py": ROOT_UNITTEST["tests.py"]}, ("python3", "-m", "unittest", "discover")),
    ],
)
def test_a_unittest_module_at_the_root_is_run_by_unittest_discovery(
    tmp_path: Path, extra: dict[str, str | None], planned: tuple[str, ...] | None
) -> None:
    files = {**ROOT_UNITTEST, **extra}
    write(tmp_path, {name: text for name, text in files.items() if text is not None})
    tests = [c for c in plan_repository(tmp_path).checks if c.kind is Kind.TEST]
    if planned is None:
        assert tests == [], tests
    else:
        (test,) = tests
        assert test.argv[: len(planned)] == planned, test


@pytest.mark.slow
@pytest.mark.parametrize(("returned", "status"), [("2 * x", "VERIFIED"), ("x + 3", "FAILED")])
def test_a_unittest_module_at_the_root_is_checked_for_real(
    tmp_path: Path, returned: str, status: str
) -> None:
    from tests.cli import assay, assay_env

    repo = tmp_path / "repo"
    write(repo, {**ROOT_UNITTEST, "p.py": f"def double(x):\n    return {returned}\n"})
    state = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state"))
    done = assay("verify", "--json", "--no-cache", "--sandbox", "bwrap", str(repo), env=state)
    assert "Traceback" not in done.stderr, done.stderr
    report = json.loads(done.stdout)
    assert report["status"] == status, report["note"]
    (test,) = [c for c in report["checks"] if c["kind"] == "test"]
    assert test["name"] == "unittest"
    assert test["tests"]["executed"] == 1, test


@pytest.mark.slow
@pytest.mark.parametrize(("returned", "status"), [("1", "VERIFIED"), ('"one"', "FAILED")])
def test_each_code_a_stated_mypy_checks_is_checked_for_real(
    tmp_path: Path, returned: str, status: str
) -> None:
    from tests.test_go_cache import verify

    repo = write_dedented(
        tmp_path / "repo",
        {
            "tox.ini": """
                [tox]
                env_list = typing-{tests,src}
                [testenv:typing-{tests,src}]
                commands =
                    tests: mypy tests/typing
                    src: mypy src
            """,
            "src/p/__init__.py": f"def one() -> int:\n    return {returned}\n",
            "tests/typing/check.py": "x: int = 1\n",
            "pyproject.toml": "[tool.assay]\nrequire_tests = false\n",
        },
    )
    report = verify(repo, tmp_path / "state", sandbox="local")
    assert report["status"] == status, report["note"]
    verdicts = {c["name"]: c["verdict"] for c in report["checks"] if c["kind"] == "typecheck"}
    assert verdicts == {"mypy": "pass", "mypy-src": "pass" if status == "VERIFIED" else "fail"}


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("yarn tsc --version", None),  # redux-thunk's CI: it was planned as the typecheck
        ("npx tsc -v", None),
        ("tsc --showConfig", None),
        ("pytest --version", None),
        ("ruff --help", None),
        ("pytest -v", Kind.TEST),  # pytest's -v is verbose, not its version
        ("yarn tsc --noEmit", Kind.TYPECHECK),
        ("yarn test --help-me", Kind.TEST),
    ],
)
def test_a_command_that_asks_a_tool_about_itself_is_no_check(line: str, kind: Kind | None) -> None:
    found = recognise_line(line)
    assert [r.kind for r in found] == ([kind] if kind else []), found
