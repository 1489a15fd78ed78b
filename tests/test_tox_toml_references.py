"""tox 4's TOML references (`{ replace = "ref", of = [...] }`, `{[vars]name}`), as Canonical's
charms write their tox.toml: `[vars] all_path` spliced into `ruff check`, a `unit` env
whose commands are another env's. Before, a command with a reference was dropped as one
"only tox can fill in", and an env whose `commands` was a reference had none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.plan import plan_repository
from assay.tools.tox_config import read_tox
from tests.cli import assay
from tests.repos import write

CHARM_TOX = """\
env_list = ["lint", "unit"]

[vars]
src_path = "src"
tests_path = "tests"
all_path = ["{[vars]src_path}", "{[vars]tests_path}"]

[env_run_base.set_env]
PYTHONPATH = "{tox_root}{:}{tox_root}{/}{[vars]src_path}"

[env.lint]
commands = [["ruff", "check", { replace = "ref", of = ["vars", "all_path"], extend = true }]]

[env.unit]
set_env = [{ replace = "ref", of = ["env_run_base", "set_env"] }, { STRICT = "1" }]
commands = { replace = "ref", of = ["env", "checks", "commands"] }

[env.checks]
commands = [["python", "-m", "unittest", "discover", "-s", "{[vars]tests_path}", "-t", "."]]
"""


def _commands(text: str) -> dict[str, list[str | None]]:
    config, error = read_tox("tox.toml", text)
    assert config is not None, error
    return {env.name: [c.line for c in env.commands] for env in config.envs}


def test_references_are_followed_in_words_settings_and_commands() -> None:
    commands = _commands(CHARM_TOX)
    assert commands["lint"] == ["ruff check src tests"]
    assert commands["unit"] == ["python -m unittest discover -s tests -t ."]
    config, _ = read_tox("tox.toml", CHARM_TOX)
    assert config is not None
    (unit,) = [env for env in config.envs if env.name == "unit"]
    assert unit.setenv == {"PYTHONPATH": ".:./src", "STRICT": "1"}


def test_another_environments_setting_by_env_and_key() -> None:
    text = (
        '[env_run_base]\ncommands = [["pytest", "-q"]]\n'
        '[env.a]\ncommands = { replace = "ref", env = "b", key = "commands" }\n'
        "[env.b]\n"
    )
    # env b sets no commands of its own: it has env_run_base's, and so has a.
    assert _commands(text)["a"] == ["pytest -q"]


@pytest.mark.parametrize(
    "reference",
    [
        '{ replace = "ref", of = ["vars", "missing"] }',
        '{ replace = "ref", of = "vars" }',
        '{ replace = "ref", of = ["vars", "loop"] }',
        '{ replace = "ref", of = [] }',
        '{ replace = "ref", env = "absent", key = "commands" }',
    ],
)
def test_a_reference_that_leads_nowhere_drops_the_command(reference: str) -> None:
    text = (
        '[vars]\nloop = { replace = "ref", of = ["vars", "loop"] }\n'
        f'[env_run_base]\ncommands = [["pytest", {reference}]]\n'
    )
    config, _ = read_tox("tox.toml", text)
    assert config is not None
    ((command,),) = [env.commands for env in config.envs]
    assert command.line is None and command.problem == "uses a substitution only tox can fill in"


TESTS = (
    "import unittest\n\nfrom mod import double\n\n\n"
    "class T(unittest.TestCase):\n    def test_double(self):\n"
    "        self.assertEqual(double(2), 4)\n"
)


def test_a_referenced_command_is_planned(tmp_path: Path) -> None:
    write(tmp_path, {"tox.toml": CHARM_TOX, "src/mod.py": "", "tests/test_mod.py": TESTS})
    (test,) = [c for c in plan_repository(tmp_path).checks if c.kind.value == "test"]
    assert test.argv[-6:] == ("unittest", "discover", "-s", "tests", "-t", ".")
    assert test.env["STRICT"] == "1"


@pytest.mark.parametrize(("doubled", "status"), [("x * 2", "VERIFIED"), ("x * 3", "FAILED")])
def test_a_referenced_command_decides_the_verdict(
    tmp_path: Path, doubled: str, status: str
) -> None:
    repo = write(
        tmp_path / "repo",
        {
            "tox.toml": CHARM_TOX,
            "src/mod.py": f"def double(x):\n    return {doubled}\n",
            "tests/__init__.py": "",
            "tests/test_mod.py": TESTS,
        },
    )
    done = assay("verify", "--json", "--no-cache", "--kind", "test", str(repo), timeout=300)
    report = json.loads(done.stdout)
    assert report["status"] == status, report["note"]
    (unittest,) = [c for c in report["checks"] if c["name"] == "unittest"]
    assert unittest["tests"]["executed"] == 1
