"""assay's own configuration: the schema, and clear errors for every kind of malformed input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.config import ConfigError, from_assay_toml, from_pyproject, parse_config
from assay.verdict import Kind


def test_full_schema_in_pyproject() -> None:
    text = (
        "[project]\nname = 'x'\n\n[tool.assay]\ntimeout = 90\nrequire_tests = false\n"
        "required = ['build', 'test']\nskip = ['lint']\n\n[tool.assay.commands]\n"
        "test = 'pytest -q \"tests/a b\"'\nlint = ['ruff', 'check', '.']\n"
        "typecheck = { command = 'mypy src', timeout = 300, tool = 'mypy', cwd = 'pkg', env = { A = '1' } }\n"
    )
    config = from_pyproject(text)
    assert config is not None
    assert config.source == "pyproject.toml"
    assert config.timeout_s == 90.0 and config.require_tests is False
    assert config.required == {Kind.BUILD, Kind.TEST} and config.skip == {Kind.LINT}
    commands = {c.kind: c for c in config.commands}
    assert commands[Kind.TEST].argv == ("pytest", "-q", "tests/a b")
    assert commands[Kind.TEST].line == 11
    assert commands[Kind.LINT].argv == ("ruff", "check", ".")
    typecheck = commands[Kind.TYPECHECK]
    assert (typecheck.timeout_s, typecheck.tool, typecheck.cwd, dict(typecheck.env)) == (
        300.0,
        "mypy",
        "pkg",
        {"A": "1"},
    )
    assert config.to_dict()["commands"]["lint"] == ["ruff", "check", "."]


def test_pyproject_without_assay_table() -> None:
    assert from_pyproject("[project]\nname = 'x'\n") is None


def test_assay_toml_top_level_or_tool_table() -> None:
    assert from_assay_toml("timeout = 5\n").timeout_s == 5.0
    assert from_assay_toml("[tool.assay]\ntimeout = 7\n").timeout_s == 7.0
    assert from_assay_toml("").commands == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("timeout = \n", "not valid TOML"),
        ("requre_tests = true\n", "unknown key 'requre_tests'"),
        ("timeout = -1\n", "timeout: expected a number of seconds"),
        ("timeout = true\n", "timeout: expected a number of seconds"),
        ("timeout = 'long'\n", "timeout: expected a number"),
        ("require_tests = 'yes'\n", "require_tests: expected true or false"),
        ("required = 'test'\n", "required: expected a list of kinds"),
        ("skip = ['lnit']\n", "unknown kind 'lnit'"),
        ("commands = 'pytest'\n", "'commands' must be a table"),
        ("[commands]\nsmoke = 'x'\n", "unknown kind 'smoke'"),
        ("[commands]\ntest = ''\n", "empty command"),
        ("[commands]\ntest = 'pytest \"unclosed'\n", "cannot split command"),
        ("[commands]\ntest = 3\n", "expected a command string or a list of strings"),
        ("[commands]\ntest = ['pytest', 1]\n", "expected a command string or a list of strings"),
        ("[commands]\ntest = { timeout = 3 }\n", "missing 'command'"),
        ("[commands]\ntest = { command = 'x', shell = true }\n", "unknown key 'shell'"),
        (
            "[commands]\ntest = { command = 'x', env = { A = 1 } }\n",
            "env: expected a table of string",
        ),
        ("[commands]\ntest = { command = 'x', tool = '' }\n", "tool: expected a tool name"),
        ("[commands]\ntest = { command = 'x', cwd = 3 }\n", "cwd: expected a directory"),
        ("protect = 'fixtures/**'\n", "protect: expected a list of path globs"),
        ("protect = ['']\n", "protect: expected a non-empty path glob"),
        ("protect = [3]\n", "protect: expected a non-empty path glob"),
        ("protect = ['/etc/passwd']\n", "is not a path inside the repository"),
        ("protect = ['../elsewhere/**']\n", "is not a path inside the repository"),
        ("protect = ['fixtures\\\\x']\n", "is not a path inside the repository"),
    ],
)
def test_malformed_config_names_the_file_and_key(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match="assay.toml") as caught:
        from_assay_toml(text)
    assert message in str(caught.value)


def test_protect_names_repository_paths() -> None:
    config = from_assay_toml("protect = ['fixtures/**', './golden/*.txt', 'fixtures/**']\n")
    assert config.protect == ("fixtures/**", "golden/*.txt")
    assert config.to_dict()["protect"] == ["fixtures/**", "golden/*.txt"]
    assert from_pyproject("[tool.assay]\nprotect = ['data/**']\n").protect == ("data/**",)  # type: ignore[union-attr]


def test_pyproject_errors_name_the_table() -> None:
    with pytest.raises(ConfigError, match=r"pyproject.toml \[tool.assay\]: unknown key 'x'"):
        from_pyproject("[tool.assay]\nx = 1\n")
    with pytest.raises(ConfigError, match="expected a table"):
        from_pyproject("[tool]\nassay = 3\n")


def test_parse_config_rejects_non_tables() -> None:
    with pytest.raises(ConfigError, match="expected a table, got a list"):
        parse_config([], "assay.toml")


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(max_size=300), st.binary(max_size=300).map(lambda b: b.decode("utf-8", "replace"))
    )
)
def test_arbitrary_text_is_a_config_or_a_config_error(text: str) -> None:
    for parse in (from_assay_toml, from_pyproject):
        try:
            parse(text)
        except ConfigError as exc:
            assert str(exc)


toml_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 10**6)
    | st.floats(allow_nan=False)
    | st.text(max_size=12),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=10), c, max_size=3),
    max_leaves=10,
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(
            ["timeout", "require_tests", "required", "skip", "commands", "protect", "x"]
        ),
        toml_values,
        max_size=4,
    )
)
def test_arbitrary_structures_are_a_config_or_a_config_error(data: dict) -> None:
    try:
        parse_config(data, "assay.toml")
    except ConfigError as exc:
        assert "assay.toml" in str(exc)


def test_command_line_is_found_under_the_commands_table() -> None:
    text = (
        "[project.optional-dependencies]\ntest = ['pytest']\n\n"
        "[tool.assay.commands]\ntest = 'pytest -q'\n"
    )
    config = from_pyproject(text)
    assert config is not None and config.commands[0].line == 5
