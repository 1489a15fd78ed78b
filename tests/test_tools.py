"""Tool declarations: every tool discovery can emit is declared, every declaration is complete,
and every table the rest of assay reads is derived from the declarations."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from assay.discovery import discover
from assay.discovery.command_lines import recognise_line
from assay.evidence import Check, CheckerId
from assay.instrument import Instrumented, instrument
from assay.parsers import parser_for
from assay.plan import CHECK_ONLY_BUILDS, GENERIC_TOOLS, PlanOptions, plan
from assay.toolchains import TOOLCHAINS, toolchain_for
from assay.tools import (
    COMMAND_WORDS,
    ECOSYSTEMS,
    SHELL,
    TOOLS,
    dependency_caches,
    recognise_words,
    tool_spec,
)
from assay.verdict import Kind
from tests.repos import write_dedented
from tests.results import process_result

#: Repositories that between them make every detector answer, in every way it can.
CORPUS: dict[str, dict[str, str]] = {
    "python-configured": {
        "pyproject.toml": """
            [tool.pytest.ini_options]
            [tool.ruff]
            [tool.mypy]
            [tool.pyright]
        """,
        "tests/test_a.py": "import pytest\n",
    },
    "python-unittest": {
        "setup.py": "",
        "tests/__init__.py": "",
        "tests/test_a.py": "import unittest\n",
    },
    "python-fallback": {"requirements.txt": "", "tests/test_a.py": "def test_a(): pass\n"},
    "tox-nox": {
        "tox.ini": "[testenv]\ncommands = pytest -q\n\n[testenv:lint]\ncommands = flake8 .\n",
        "noxfile.py": "",
    },
    "node": {
        "package.json": """
            {"scripts": {"build": "tsc", "typecheck": "tsc --noEmit", "lint": "eslint .",
                         "test": "jest", "pretest": "npm run build"},
             "workspaces": ["packages/*"]}
        """,
        "packages/a/package.json": '{"scripts": {"test": "vitest run"}}',
        "tsconfig.json": "{}",
        "eslint.config.js": "",
        "jest.config.js": "",
        "vitest.config.ts": "",
    },
    "node-fallback": {"package.json": "{}", "test/a.test.js": ""},
    "go": {"go.mod": "module example.com/x\n\ngo 1.22\n"},
    "maven": {"pom.xml": "<project/>", "mvnw": ""},
    "gradle": {
        "build.gradle.kts": "",
        ".github/workflows/ci.yml": "on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n      - run: ./gradlew compileJava\n",
    },
    "rust": {"Cargo.toml": "[package]\nname = 'x'\nversion = '0.1.0'\n\n[workspace]\n"},
    "make-just": {
        "Makefile": "test:\n\tgo test ./...\nlint:\n\tcargo clippy\ncheck:\n\tpytest\nbuild:\n\tgo build ./...\n",
        "justfile": "test:\n    mocha\n",
    },
    "ci": {
        ".github/workflows/ci.yml": """
            on: push
            jobs:
              t:
                runs-on: ubuntu-latest
                steps:
                  - run: |
                      python -m compileall -q .
                      python -m unittest discover
                      pylint src
                      black --check .
                      npx prettier --check .
                      npx biome ci .
                      npx oxlint
                      mypy src
                      ruff check .
                      basedpyright
                      uvx ty check src
                      npx vue-tsc --noEmit
                      node --test
                      pnpm run lint
                      go vet ./...
                      go build ./...
                      cargo test
                      cargo build
                      cargo nextest run
                      cargo check
                      make test
                      nox -s tests
        """,
    },
    "docs": {"README.md": "```sh\npy.test\nyarn test\njust test\ngmake lint\n```\n"},
    "assay-config": {
        "assay.toml": '[commands]\ntest = "./run-tests.sh"\nlint = { command = "go vet ./...", tool = "go-vet" }\n'
    },
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("corpus")
    return {name: write_dedented(base / name, files) for name, files in CORPUS.items()}


def test_every_tool_discovery_emits_over_the_corpus_is_declared(corpus: dict[str, Path]) -> None:
    emitted: set[str] = set()
    for name, root in corpus.items():
        found = discover(root)
        assert not found.errors, (name, found.errors)
        for candidate in found.candidates:
            assert tool_spec(candidate.tool) is not None, (name, candidate.to_dict())
            emitted.add(candidate.tool)
        for check in plan(found, PlanOptions()).checks:
            assert tool_spec(check.tool) is not None, (name, check.to_dict())
    # The corpus reaches every tool that has a way to be recognised, so the walk is no sample.
    recognisable = {t.name for t in TOOLS.values() if t.commands} | {SHELL}
    assert recognisable <= emitted, f"not reached by the corpus: {sorted(recognisable - emitted)}"


def test_every_recognised_word_names_a_declared_tool() -> None:
    for word, entries in COMMAND_WORDS.items():
        for tool, _, _ in entries:
            assert tool_spec(tool) is not None, (word, tool)
    assert recognise_words("frobnicate", ["test"]) is None


def test_one_naming_scheme_tools_and_check_names() -> None:
    # `go test` is a check named go-test of the tool go; no tool name is a check name.
    (hit,) = recognise_line("go test ./...")
    assert (hit.tool, hit.name) == ("go", "go-test")
    for name in ("go-test", "go-vet", "go-build", "cargo-test", "cargo-check", "cargo-build"):
        assert tool_spec(name) is None, name


def test_a_configured_check_name_names_its_tool(corpus: dict[str, Path]) -> None:
    checks = {c.name: c for c in plan(discover(corpus["assay-config"]), PlanOptions()).checks}
    assert checks["go-vet"].tool == "go"


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_each_declaration_is_complete(name: str, tmp_path: Path) -> None:
    spec = TOOLS[name]
    assert spec.name == name
    assert spec.is_toolchain or spec.wrapper, "a tool with no binary is a wrapper, read as written"
    if spec.is_toolchain:
        assert spec.install_hint, "a missing toolchain says what to install"
        assert spec.version_pattern.groups >= 1
    # Its parser imports and accepts what the engine passes.
    parser = parser_for(name)
    assert callable(parser)
    assert len(inspect.signature(parser).parameters) == 3
    check = Check(name, Kind.TEST, (spec.binaries or ("run",))[0:1] + ("x",), tool=name)
    empty = process_result(check.argv, cwd=str(tmp_path), exit_code=1)
    parser(check, empty, tmp_path)  # reads nothing there; must not raise
    if spec.instrument is not None:
        result = instrument(check, CheckerId(name, "99.0", "/bin/x"), tmp_path)
        assert isinstance(result, Instrumented) and result.argv[0] == check.argv[0]
        assert all(tmp_path in r.parents for r in result.reports), "reports go to report_dir"
    if spec.tune is not None:
        tuned = spec.tune([*check.argv], True)
        assert isinstance(tuned, list) and tuned[0] == check.argv[0]
    if spec.dependency_env is not None:
        env = spec.dependency_env(tmp_path / ".assay-deps")
        assert env and all(isinstance(v, str) for v in env.values())
    for command in spec.commands:
        assert command.words and (command.kind is not None or command.match is not None)


@pytest.mark.parametrize("ecosystem", ECOSYSTEMS, ids=lambda e: e.ecosystem.value)
def test_each_ecosystem_is_complete(ecosystem: object, tmp_path: Path) -> None:
    from assay.tools.spec import EcosystemSpec

    assert isinstance(ecosystem, EcosystemSpec)
    assert all(t.ecosystem is ecosystem.ecosystem for t in ecosystem.tools)
    if ecosystem.install is not None:
        assert ecosystem.install(tmp_path) == [], "an empty directory needs nothing installed"
    for part in ("skip", "only", "trivial_assertions", "assertions"):
        fragment = getattr(ecosystem.markers, part)
        if fragment:
            re.compile(fragment)
            assert not re.search(r"\\\d", fragment), "groups referred back to must be named"


def test_tables_are_views_of_the_declarations() -> None:
    assert set(TOOLCHAINS) == {n for n, s in TOOLS.items() if s.is_toolchain}
    for name, toolchain in TOOLCHAINS.items():
        assert toolchain_for(name) is toolchain
        assert toolchain.candidates == TOOLS[name].binaries
    assert {n for n, s in TOOLS.items() if s.wrapper} == GENERIC_TOOLS
    assert {n for n, s in TOOLS.items() if s.check_only_build} == CHECK_ONLY_BUILDS
    assert toolchain_for(SHELL) is None, "a repository's own command is never a toolchain"


def test_dependency_caches_are_what_verify_installs_into(tmp_path: Path) -> None:
    # The one view `verify --install` reads: every cache inside the workspace (and pip
    # told not to ask the index for a newer pip).
    deps = tmp_path / ".assay-deps"
    assert dependency_caches(tmp_path) == {
        "GOMODCACHE": str(deps / "go-mod"),
        "GOFLAGS": "-modcacherw",
        "CARGO_HOME": str(deps / "cargo"),
        "npm_config_cache": str(deps / "npm"),
        "YARN_GLOBAL_FOLDER": str(deps / "yarn-berry"),
        "BUN_INSTALL_CACHE_DIR": str(deps / "bun"),
        "PIP_CACHE_DIR": str(deps / "pip"),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }


@pytest.mark.parametrize(
    ("word", "kind"), [("vue-tsc", Kind.TYPECHECK), ("tsc", Kind.TYPECHECK), ("jest", Kind.TEST)]
)
def test_every_node_bin_tool_runs_from_the_projects_node_modules(
    word: str, kind: Kind, tmp_path: Path
) -> None:
    # The list of tools looked up in node_modules/.bin is read from the declarations: a
    # command a CI step runs through npx is planned from the project's own copy.
    bin_dir = tmp_path / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / word).write_text("#!/bin/sh\n")
    (bin_dir / word).chmod(0o755)
    (tmp_path / "package.json").write_text("{}")
    args = "--noEmit" if kind is Kind.TYPECHECK else "--ci"
    write_dedented(
        tmp_path,
        {
            ".github/workflows/ci.yml": f"""
                on: push
                jobs:
                  check:
                    runs-on: ubuntu-latest
                    steps:
                      - run: npx --no-install {word} {args}
            """
        },
    )
    checks = plan(discover(tmp_path), PlanOptions()).checks
    assert [c.argv for c in checks if c.kind is kind][:1] == [
        (f"node_modules/.bin/{word}", args)
    ], checks


@pytest.mark.parametrize(
    ("config", "tool", "args"),
    [("jest.config.js", "jest", ("--ci",)), ("vitest.config.ts", "vitest", ("run",))],
)
def test_a_root_config_plans_its_declared_tool(
    config: str, tool: str, args: tuple[str, ...], tmp_path: Path
) -> None:
    (tmp_path / "package.json").write_text("{}")
    (tmp_path / config).write_text("export default {}\n")
    spec = tool_spec(tool)
    assert spec is not None and spec.root_config is not None
    assert config in spec.root_config.files
    tests = [c for c in plan(discover(tmp_path), PlanOptions()).checks if c.kind is Kind.TEST]
    assert [(c.tool, c.argv[1:]) for c in tests][:1] == [(tool, args)], tests


def test_a_module_that_declares_other_than_the_index_says_is_refused() -> None:
    """The index (`assay.tools.index`) is what lets a run load one ecosystem or none; a
    declaration it does not list would be unknown to every lookup, so loading one fails."""
    from dataclasses import replace

    from assay.tools import _check_indexed, ecosystem_spec
    from assay.tools.index import Ecosystem

    python = ecosystem_spec(Ecosystem.PYTHON)
    _check_indexed(python)
    with pytest.raises(RuntimeError, match="the index lists"):
        _check_indexed(replace(python, tools=python.tools[:-1]))
    with pytest.raises(RuntimeError, match="differ from the index"):
        _check_indexed(replace(python, steering_env=(*python.steering_env, "UV")))
