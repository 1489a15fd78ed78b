"""A hostile tree's configuration that names its own values many times over: filled in
pass after pass on the host while the plan is made, a 4 KiB Makefile of `V = $(V)$(V)...`
took 4 GB and 22 s to plan, and a tox.ini of sixty `{[vars]a}` never finished planning.
What is filled in now stops at `substitution.MAX_FILLED_CHARS`."""

from __future__ import annotations

import re

from assay.discovery.make import read_makefile
from assay.substitution import MAX_FILLED_CHARS, bounded_sub
from assay.tools.tox_config import MAX_SETTING_LINES, read_tox


def test_a_make_variable_naming_itself_many_times_fills_in_within_the_bound() -> None:
    makefile = read_makefile("V = " + "$(V)" * 300 + "\n\ntest: $(V)\n\tpython -m pytest\n")
    assert len(makefile.expand("$(V)")) <= MAX_FILLED_CHARS


def test_plain_make_variables_are_still_filled_in() -> None:
    makefile = read_makefile("PY = python3\nRUN = $(PY) -m\n\ntest:\n\t$(RUN) pytest\n")
    assert makefile.expand("$(RUN) pytest") == "python3 -m pytest"


def _commands_chars(text: str) -> int:
    config, error = read_tox("tox.ini", text)
    assert config is not None, error
    return sum(len(c.raw) + len(c.line or "") for env in config.envs for c in env.commands)


def test_a_tox_value_naming_itself_many_times_is_left_to_tox() -> None:
    text = "[vars]\na = " + "{[vars]a}" * 20 + "\n\n[testenv]\ncommands = pytest {[vars]a}\n"
    config, _ = read_tox("tox.ini", text)
    assert config is not None
    (command,) = [c for env in config.envs for c in env.commands]
    assert command.line is None, "filled in to more than the bound"


def test_a_tox_section_of_lines_naming_it_again_splices_within_the_bound() -> None:
    text = "[vars]\na =" + "\n    {[vars]a}" * 12 + "\n\n[testenv]\ncommands =\n    {[vars]a}\n"
    assert _commands_chars(text) <= 2 * MAX_FILLED_CHARS


def test_a_tox_section_spliced_into_thousands_of_commands_is_left_to_tox() -> None:
    text = "[vars]\na =" + "\n    {[vars]a}" * 60 + "\n\n[testenv]\ncommands =\n    {[vars]a}\n"
    config, _ = read_tox("tox.ini", text)
    assert config is not None
    (command,) = [c for env in config.envs for c in env.commands]
    assert command.line is None and "only tox can run them" in command.problem


def test_an_environment_of_many_commands_is_still_read_whole() -> None:
    lines = "".join(f"\n    python -c 'print({n})'" for n in range(MAX_SETTING_LINES))
    config, _ = read_tox("tox.ini", f"[testenv]\ncommands ={lines}\n")
    assert config is not None
    commands = [c.line for env in config.envs for c in env.commands]
    assert commands[-1] == f"python -c 'print({MAX_SETTING_LINES - 1})'"
    assert len(commands) == MAX_SETTING_LINES


def test_tox_references_are_still_spliced() -> None:
    text = "[vars]\nsrc = calc tests\n\n[testenv]\ncommands = ruff check {[vars]src}\n"
    config, _ = read_tox("tox.ini", text)
    assert config is not None
    lines = [c.line for env in config.envs for c in env.commands]
    assert lines == ["ruff check calc tests"]


def test_bounded_sub_is_sub_within_its_bound() -> None:
    pattern = re.compile(r"x")
    assert bounded_sub(pattern, lambda _: "yy", "axbxc") == "ayybyyc"
    assert bounded_sub(pattern, lambda _: "yy", "axbxc", limit=7) == "ayybyyc"
    assert bounded_sub(pattern, lambda _: "yy", "axbxc", limit=6) is None
