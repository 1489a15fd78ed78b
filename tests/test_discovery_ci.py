"""CI configuration beyond GitHub and GitLab (Travis, CircleCI, Azure Pipelines, Jenkins,
Woodpecker, Buildkite, Drone), and the make targets CI runs (`make all`, `make`, `make check`)."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from assay.discovery import Origin, ci, discover
from assay.discovery.model import Candidate
from assay.plan import plan_repository
from assay.verdict import Kind
from tests.repos import workflow, write_dedented


def ci_candidates(root: Path) -> list[Candidate]:
    return [c for c in discover(root).candidates if c.origin is Origin.CI]


def by_argv(root: Path) -> dict[str, Candidate]:
    return {" ".join(c.argv): c for c in ci_candidates(root)}


def ci_report_errors(root: Path) -> list[str]:
    return [e for r in discover(root).reports if r.detector == ci.NAME for e in r.errors]


def test_travis_script_and_build_matrix(tmp_path: Path) -> None:
    write_dedented(
        tmp_path,
        {
            ".travis.yml": """
                language: python
                env:
                  global:
                    - STRICT=1
                install:
                  - pip install -e .[test]
                script:
                  - python -m pytest -q tests
                jobs:
                  include:
                    - stage: lint
                      script: flake8 src
            """
        },
    )
    found = by_argv(tmp_path)
    test = found["python3 -m pytest -q tests"]
    assert test.kind is Kind.TEST and str(test.source) == ".travis.yml:8"
    assert test.env == {"STRICT": "1"}
    assert found["flake8 src"].kind is Kind.LINT
    assert str(found["flake8 src"].source) == ".travis.yml:12"


def test_circleci_run_steps_in_both_forms_with_their_environment(tmp_path: Path) -> None:
    write_dedented(
        tmp_path,
        {
            ".circleci/config.yml": """
                version: 2.1
                jobs:
                  test:
                    docker:
                      - image: cimg/python:3.12
                        command: [pytest, --this-is-the-image-command]
                    environment:
                      FEATURE: "on"
                    steps:
                      - checkout
                      - run:
                          name: tests
                          command: |
                            pip install .
                            pytest -q
                      - run: mypy src
                workflows:
                  main:
                    jobs: [test]
            """
        },
    )
    found = by_argv(tmp_path)
    assert set(found) == {"python3 -m pytest -q", "mypy src"}
    assert found["python3 -m pytest -q"].env == {"FEATURE": "on"}
    assert str(found["python3 -m pytest -q"].source) == ".circleci/config.yml:15"
    assert found["mypy src"].kind is Kind.TYPECHECK


def test_azure_pipelines_script_and_bash_steps_at_every_level(tmp_path: Path) -> None:
    write_dedented(
        tmp_path,
        {
            "azure-pipelines.yml": """
                variables:
                  MODE: strict
                  OS_IMAGE: $(image)
                stages:
                  - stage: check
                    jobs:
                      - job: lint
                        steps:
                          - task: UsePythonVersion@0
                          - bash: ruff check .
                            displayName: ruff
                      - job: test
                        variables:
                          - name: LEVEL
                            value: "2"
                        steps:
                          - script: python -m pytest
                            env:
                              EXTRA: "yes"
            """
        },
    )
    found = by_argv(tmp_path)
    assert found["ruff check ."].kind is Kind.LINT
    assert found["python3 -m pytest"].env == {"MODE": "strict", "LEVEL": "2", "EXTRA": "yes"}


def test_jenkinsfile_sh_steps_are_read_as_text(tmp_path: Path) -> None:
    write_dedented(
        tmp_path,
        {
            "Jenkinsfile": """
                pipeline {
                    agent any
                    environment {
                        STRICT = '1'
                        TOKEN = credentials('x')
                    }
                    stages {
                        stage('test') {
                            steps {
                                sh 'python -m pytest -q'
                                sh "ruff check ${env.SRC}"
                                sh '''
                                    mypy src
                                '''
                                sh script: 'go vet ./...', returnStatus: true
                                sh(script: "cargo test")
                            }
                        }
                    }
                }
            """
        },
    )
    found = by_argv(tmp_path)
    assert set(found) == {"python3 -m pytest -q", "mypy src", "cargo test"}
    assert str(found["python3 -m pytest -q"].source) == "Jenkinsfile:10"
    assert found["python3 -m pytest -q"].env == {"STRICT": "1"}
    assert str(found["mypy src"].source) == "Jenkinsfile:13"
    dropped = {d.what: d.reason for r in discover(tmp_path).reports for d in r.dropped}
    assert "expression" in dropped["ruff check ${env.SRC}"]
    assert "returnStatus" in dropped["go vet ./..."]


def test_woodpecker_file_and_directory_in_each_format(tmp_path: Path) -> None:
    write_dedented(
        tmp_path,
        {
            ".woodpecker.yml": """
                pipeline:
                  test:
                    image: python
                    commands:
                      - pip install tox
                      - pytest
            """,
            ".woodpecker/lint.yaml": """
                steps:
                  - name: lint
                    image: python
                    environment:
                      RUFF_CACHE_DIR: /tmp/ruff
                    commands:
                      - ruff check .
            """,
            ".woodpecker/types.yml": """
                steps:
                  types:
                    image: python
                    commands: mypy pkg
            """,
        },
    )
    found = by_argv(tmp_path)
    assert set(found) == {"python3 -m pytest", "ruff check .", "mypy pkg"}
    assert found["ruff check ."].env == {"RUFF_CACHE_DIR": "/tmp/ruff"}
    assert str(found["mypy pkg"].source) == ".woodpecker/types.yml:4"


def test_buildkite_command_and_commands_inside_groups(tmp_path: Path) -> None:
    write_dedented(
        tmp_path,
        {
            ".buildkite/pipeline.yml": """
                env:
                  CI_LEVEL: "3"
                steps:
                  - label: ":pytest: tests"
                    command: "python -m pytest -q"
                  - wait
                  - group: checks
                    steps:
                      - label: vet
                        commands:
                          - go vet ./...
                        env:
                          GOFLAGS: -mod=mod
            """
        },
    )
    found = by_argv(tmp_path)
    assert found["python3 -m pytest -q"].env == {"CI_LEVEL": "3"}
    assert found["go vet ./..."].env == {"CI_LEVEL": "3", "GOFLAGS": "-mod=mod"}
    assert found["go vet ./..."].kind is Kind.LINT


def test_drone_reads_every_document(tmp_path: Path) -> None:
    write_dedented(
        tmp_path,
        {
            ".drone.yml": """
                kind: pipeline
                name: default
                steps:
                  - name: test
                    image: golang
                    environment:
                      CGO_ENABLED: "0"
                      SECRET:
                        from_secret: s
                    commands:
                      - go build ./...
                      - go test ./...
                ---
                kind: pipeline
                name: lint
                steps:
                  - name: lint
                    commands: [cargo clippy]
                ---
                kind: signature
                hmac: 0123
            """
        },
    )
    found = by_argv(tmp_path)
    assert found["go test ./..."].env == {"CGO_ENABLED": "0"}
    assert found["go test ./..."].kind is Kind.TEST
    assert found["go build ./..."].kind is Kind.BUILD
    assert found["cargo clippy"].kind is Kind.LINT
    assert str(found["go test ./..."].source) == ".drone.yml:12"


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (".travis.yml", "script: [unclosed", ".travis.yml: not valid YAML"),
        (".travis.yml", "- a\n- list\n", ".travis.yml: expected a mapping"),
        (".circleci/config.yml", "jobs: {a: [", ".circleci/config.yml: not valid YAML"),
        ("azure-pipelines.yml", "just text", "azure-pipelines.yml: expected a mapping"),
        (".woodpecker.yml", "steps: {a: !!python/object:os.system x}", "not valid YAML"),
        (".woodpecker/a.yml", "steps:\n\t- x", ".woodpecker/a.yml: not valid YAML"),
        (".buildkite/pipeline.yml", "steps: [{command: }", "not valid YAML"),
        (".drone.yml", "kind: pipeline\n---\n: : :\n", ".drone.yml: not valid YAML"),
    ],
)
def test_malformed_ci_files_are_named_problems(
    tmp_path: Path, name: str, content: str, message: str
) -> None:
    write_dedented(tmp_path, {name: content})
    assert any(message in e for e in ci_report_errors(tmp_path)), ci_report_errors(tmp_path)
    plan_repository(tmp_path)  # and planning goes on


def test_an_alias_bomb_in_any_ci_file_is_cheap(tmp_path: Path) -> None:
    bomb = (
        "a: &a [x, x, x, x, x, x, x, x, x]\n"
        + "".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
            for i in range(8)
        )
        + "script: [pytest]\n"
    )
    for name in (".travis.yml", ".circleci/config.yml", ".drone.yml", "azure-pipelines.yml"):
        write_dedented(tmp_path, {name: bomb})
    started = time.perf_counter()
    assert {c.tool for c in ci_candidates(tmp_path)} == {"pytest"}
    assert time.perf_counter() - started < 2


def test_jenkinsfile_that_is_not_text_is_a_problem(tmp_path: Path) -> None:
    (tmp_path / "Jenkinsfile").write_bytes(b"\x00\xff sh 'pytest'")
    assert any("Jenkinsfile" in e for e in ci_report_errors(tmp_path))


# --- make targets that CI runs -----------------------------------------------------------

MAKEFILE = """
    .PHONY: all check lint unit
    PY ?= python3

    all: lint unit

    lint:
    \truff check .

    unit:
    \t$(PY) -m pytest -q

    check: all
"""


@pytest.mark.parametrize("line", ["make all", "make", "make check", "make -j2 check"])
def test_a_workflow_running_a_make_target_that_runs_checks_is_picked_up(
    tmp_path: Path, line: str
) -> None:
    write_dedented(
        tmp_path,
        {
            "Makefile": MAKEFILE,
            ".github/workflows/ci.yml": f"""
                on: push
                jobs:
                  build:
                    runs-on: ubuntu-latest
                    env:
                      STRICT: "1"
                    steps:
                      - uses: actions/checkout@v4
                      - run: {line}
            """,
        },
    )
    found = ci_candidates(tmp_path)
    assert [(c.argv, c.kind, c.tool) for c in found] == [(tuple(line.split()), Kind.TEST, "make")]
    assert "runs" in found[0].reason and "pytest" in found[0].reason
    tests = [c for c in plan_repository(tmp_path).checks if c.kind is Kind.TEST]
    assert [c.argv[0] for c in tests] == ["make"]
    assert tests[0].env == {"STRICT": "1"}


def test_the_makefile_alone_plans_all_when_its_recipe_runs_tests(tmp_path: Path) -> None:
    write_dedented(tmp_path, {"Makefile": "all:\n\tpython3 -m pytest -q\n"})
    tests = [c for c in plan_repository(tmp_path).checks if c.kind is Kind.TEST]
    assert [c.argv for c in tests] == [("make", "all")]


def test_a_make_target_ci_runs_that_runs_nothing_known_is_not_a_check(tmp_path: Path) -> None:
    write_dedented(
        tmp_path,
        {
            "Makefile": "all:\n\t$(CC) -o prog prog.c\n",
            ".travis.yml": "script:\n  - make\n  - make docs\n",
        },
    )
    assert ci_candidates(tmp_path) == []


#: python-multipart's (and encode's) layout: CI runs scripts that hold every command.
CHECK_SCRIPT = """\
#!/bin/sh -e

set -x

SOURCE_FILES="pkg tests"

uv run ruff format --check --diff $SOURCE_FILES
uv run ruff check $SOURCE_FILES
uv run mypy ${SOURCE_FILES}
"""
TEST_SCRIPT = '#!/bin/sh -e\nset -x\nuv run coverage run -m pytest "${@}"\nuv run coverage report\n'


@pytest.mark.parametrize(
    "steps",
    [("scripts/check", "scripts/test"), ("bash ./scripts/check", "sh scripts/test")],
    ids=["run", "through-a-shell"],
)
def test_a_script_ci_runs_is_read_with_its_variables(
    tmp_path: Path, steps: tuple[str, str]
) -> None:
    write_dedented(
        tmp_path,
        {
            ".github/workflows/main.yml": workflow(*steps),
            "scripts/check": CHECK_SCRIPT,
            "scripts/test": TEST_SCRIPT,
            "pyproject.toml": "[tool.ruff]\nline-length = 120\n[tool.mypy]\n",
            "pkg/__init__.py": "",
        },
    )
    found = by_argv(tmp_path)
    assert "ruff check pkg tests" in found, list(found)
    assert "mypy pkg tests" in found, list(found)
    assert found["ruff check pkg tests"].source.file == "scripts/check"
    assert found["ruff check pkg tests"].source.line == 8
    planned = {c.name: c.argv for c in plan_repository(tmp_path).checks}
    assert planned["ruff"] == ("ruff", "check", "pkg", "tests")
    assert planned["pytest"][:3] == ("python3", "-m", "pytest")
    assert "" not in planned["pytest"]  # `"${@}"` with no arguments is no word at all


def test_a_scripts_arguments_and_only_plain_variables_are_given(tmp_path: Path) -> None:
    script = (
        "#!/bin/bash\n"
        'TARGETS=$(git ls-files "*.py")\n'  # computed: left as the shell would see it
        "PLAIN=pkg\n"
        "mypy $TARGETS\n"
        "ruff check '$PLAIN' $PLAIN\n"  # single quotes: left as written
        'python -m pytest "$@"\n'
        "ci/run.sh\n"  # calls itself: read once
    )
    write_dedented(
        tmp_path,
        {".github/workflows/main.yml": workflow("ci/run.sh -k fast tests"), "ci/run.sh": script},
    )
    found = by_argv(tmp_path)
    assert "python3 -m pytest -k fast tests" in found, list(found)
    # A computed variable is not handed to mypy as the word `$TARGETS`.
    assert not any("TARGETS" in argv for argv in found), list(found)
    assert "ruff check $PLAIN pkg" in found, list(found)


def test_a_script_after_another_command_is_read_or_its_leaving_out_said(tmp_path: Path) -> None:
    """kleur 4.1.5's CI: `npm run build && ./test/env.sh`. The script was neither read nor
    named among what was left out; now each script of a line is read, and one holding no
    check assay knows is a dropped entry."""
    write_dedented(
        tmp_path,
        {
            ".github/workflows/main.yml": workflow(
                "npm run build && ./test/env.sh", "make dist; sh ci/test.sh -k fast"
            ),
            "test/env.sh": '#!/usr/bin/env bash\n[ "$(node -p 1)" = 1 ] || exit 1\n',
            "ci/test.sh": '#!/bin/sh\npython -m pytest "$@"\n',
        },
    )
    assert "python3 -m pytest -k fast" in by_argv(tmp_path), list(by_argv(tmp_path))
    dropped = {d.what: d for r in discover(tmp_path).reports for d in r.dropped}
    assert "recognises no check" in dropped["test/env.sh"].reason, dropped
    assert dropped["test/env.sh"].source.file == ".github/workflows/main.yml"
    assert "ci/test.sh" not in dropped, dropped


def test_a_line_setting_a_variable_for_its_command_is_that_command(tmp_path: Path) -> None:
    # shlex's CI: `RUSTFLAGS=-Dwarnings cargo build ...` runs cargo; it sets no variable.
    write_dedented(
        tmp_path,
        {".github/workflows/main.yml": workflow("RUSTFLAGS=-Dwarnings cargo test --all")},
    )
    [test] = ci_candidates(tmp_path)
    assert test.argv == ("cargo", "test", "--all")
    assert test.env == {"RUSTFLAGS": "-Dwarnings"}


def test_a_ci_line_naming_a_data_file_or_a_link_out_of_the_tree_reads_no_script(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside.sh"
    outside.write_text("pytest --outside\n")
    write_dedented(
        tmp_path / "repo",
        {
            ".github/workflows/main.yml": workflow("tests/data.json", "ci/linked.sh"),
            "tests/data.json": '{"pytest": 1}\n',
        },
    )
    (tmp_path / "repo" / "ci").mkdir()
    (tmp_path / "repo" / "ci" / "linked.sh").symlink_to(outside)
    assert ci_candidates(tmp_path / "repo") == []


@pytest.mark.parametrize(("downloads", "env"), [(True, {}), (False, {"TEST_DIST": "true"})])
def test_a_job_on_another_jobs_artifact_gives_its_commands_no_variables(
    tmp_path: Path, downloads: bool, env: dict[str, str]
) -> None:
    """redux-thunk's `test-dist` job installs the tarball its build job packed, then runs
    `yarn test` with `TEST_DIST: true`, which points the tests at that package. Here the
    tree is what is tested: the variable only made its tests fail to import."""
    artifact = (
        "      - uses: actions/download-artifact@v4\n        with:\n          name: package\n"
    )
    write_dedented(
        tmp_path,
        {
            "package.json": '{"name": "p", "version": "1.0.0", "scripts": {"test": "node --test"}}',
            ".github/workflows/ci.yml": (
                "on: push\njobs:\n  test-dist:\n    runs-on: ubuntu-latest\n    steps:\n"
                + (artifact if downloads else "")
                + "      - run: npm test\n        env:\n          TEST_DIST: true\n"
            ),
        },
    )
    (test,) = [c for c in plan_repository(tmp_path).checks if c.kind is Kind.TEST]
    assert dict(test.env) == env, test


def test_a_step_over_a_literal_matrix_is_one_command_per_value(tmp_path: Path) -> None:
    """`npm run ${{ matrix.task }}` over `task: [lint, typecheck]` runs both scripts in CI;
    with the expression unexpanded the step named no script and was skipped without a word."""
    workflow = """
        on: push
        jobs:
          quality:
            strategy:
              matrix:
                node: [20, 22]
                task: [lint, "check:types"]
            steps:
              - run: npm run ${{ matrix.task }}
              - run: npm run ${{ matrix.unknown }}
    """
    package = '{"scripts": {"lint": "eslint .", "check:types": "tsc --noEmit"}}'
    write_dedented(tmp_path, {".github/workflows/q.yml": workflow, "package.json": package})
    found = {c.argv for c in discover(tmp_path).candidates if c.origin is Origin.CI}
    assert {("npm", "run", "lint"), ("npm", "run", "check:types")} <= found
    assert not any("matrix" in " ".join(argv) for argv in found), found


def test_matrix_expansion_keeps_what_it_cannot_spell_out() -> None:
    job = {"strategy": {"matrix": {"py": ["3.11", "3.12"], "os": [{"name": "x"}], "b": [True]}}}
    assert ci.matrix_expanded("tox -e py${{ matrix.py }}", job) == [
        "tox -e py3.11",
        "tox -e py3.12",
    ]
    for kept in ("run ${{ matrix.os }}", "run ${{ matrix.b }}", "run ${{ matrix.nope }}", "plain"):
        assert ci.matrix_expanded(kept, job) == [kept]
    many = {"strategy": {"matrix": {"a": list(range(10)), "b": list(range(10))}}}
    assert (
        len(ci.matrix_expanded("x ${{ matrix.a }} ${{ matrix.b }}", many)) == ci.MAX_MATRIX_SCRIPTS
    )


#: parson's layout: `all` is the tests and two variants of them, and CI runs `make all`.
VARIANTS_MAKEFILE = """\
all: test testcpp

.PHONY: test testcpp
test: tests.c lib.c
\tgcc -Wall -o $@ tests.c lib.c
\t./$@

testcpp: tests.c lib.c
\tg++ -Wall -o $@ tests.c lib.c
\t./$@
"""
MAKE_ALL_IN_CI = "on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n      - run: make all\n"


@pytest.mark.parametrize("ci_step", ["make all", "make", "make -j2", "make -j2 all"])
def test_a_target_ci_runs_over_the_tests_and_their_variants_is_planned_in_their_place(
    tmp_path: Path, ci_step: str
) -> None:
    """CI's `make` builds the default goal, `all` here: the same target as `make all`."""
    write_dedented(
        tmp_path,
        {
            "Makefile": VARIANTS_MAKEFILE,
            ".github/workflows/ci.yml": MAKE_ALL_IN_CI.replace("make all", ci_step),
        },
    )
    made = plan_repository(tmp_path)
    tests = [c for c in made.checks if c.kind is Kind.TEST]
    assert [c.argv for c in tests] == [("make", "all")]
    assert "variants" in tests[0].reason
    dropped = {d.what: d.reason for d in made.dropped if d.source.file == "Makefile"}
    assert "runs it and variants of it, as CI does" in dropped["make test"]


@pytest.mark.parametrize(
    ("makefile", "ci_step"),
    [
        (VARIANTS_MAKEFILE, "make test"),  # CI runs the one test target: so does assay
        (
            VARIANTS_MAKEFILE.replace("all: test testcpp", "all: test docs\ndocs:\n\ttrue"),
            "make all",
        ),
        (
            VARIANTS_MAKEFILE.replace("all: test testcpp", "all: test testcpp\n\t./extra"),
            "make all",
        ),
        (".DEFAULT_GOAL := test\n" + VARIANTS_MAKEFILE, "make"),  # the default goal is `test`
    ],
    ids=["ci-runs-test", "not-only-tests", "a-recipe-of-its-own", "default-goal-test"],
)
def test_a_wider_target_is_not_planned_unless_ci_runs_it_and_it_is_only_test_variants(
    tmp_path: Path, makefile: str, ci_step: str
) -> None:
    write_dedented(
        tmp_path,
        {
            "Makefile": makefile,
            ".github/workflows/ci.yml": MAKE_ALL_IN_CI.replace("make all", ci_step),
        },
    )
    tests = [c for c in plan_repository(tmp_path).checks if c.kind is Kind.TEST]
    assert [c.argv for c in tests] == [("make", "test")]


def test_a_change_only_a_variant_ci_runs_rejects_is_failed(tmp_path: Path) -> None:
    """Valid C, invalid C++ (`malloc`'s `void *` assigned without a cast): `make test`
    passes, the maintainers' `make all` fails, and so must the verdict."""
    from tests.test_go_cache import verify

    assert shutil.which("g++"), "g++ is not installed (.ci/run installs it)"
    repo = tmp_path / "repo"
    write_dedented(
        repo,
        {
            "Makefile": VARIANTS_MAKEFILE,
            ".github/workflows/ci.yml": MAKE_ALL_IN_CI,
            "lib.c": "#include <stdlib.h>\nint *make(void) { int *p = malloc(sizeof *p); *p = 2; return p; }\n",
            "tests.c": "#include <stdio.h>\nint *make(void);\nint main(void) { int ok = *make() == 2;"
            ' printf("%s\\n", ok ? "ok" : "FAIL"); return !ok; }\n',
        },
    )
    report = verify(repo, tmp_path / "state")
    assert report["status"] == "FAILED", report
    (check,) = [c for c in report["checks"] if c["kind"] == "test"]
    assert check["argv"][1:] == ["all"]
    assert "testcpp" in json.dumps(check), "the C++ variant's failure is not what failed it"
