"""What the jest and vitest planters share: reading their flags, the setup file's tests,
and the per-file rule.

Both runners collect the tests a setup file registers as tests of each test file, so the
same two canaries show once in every file of the report.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from assay.canaries import (
    Canary,
    Checks,
    NoCanary,
    _name_pattern,
    unequal,
)
from assay.parsed_output import ParsedOutput
from assay.process import ProcessResult


def is_flag(arg: str, flag: str) -> bool:
    """`arg` is `flag`, alone or as `flag=value`."""
    return arg == flag or arg.startswith(flag + "=")


def flag_value(argv: Sequence[str], flags: Sequence[str]) -> str | None | NoCanary:
    """The value the command gives one of `flags` (None: not given)."""
    for index, arg in enumerate(argv):
        for flag in flags:
            if arg == flag:
                if index + 1 >= len(argv):
                    return NoCanary(f"{flag} has no value")
                return argv[index + 1]
            if arg.startswith(flag + "="):
                return arg.split("=", 1)[1]
    return None


def without_flags(
    argv: tuple[str, ...], valued: Sequence[str], switches: Sequence[str] = ()
) -> tuple[str, ...]:
    """`argv` less the `valued` flags with their values (`--flag value`, `--flag=value`) and
    the `switches` (`--flag`, `--flag=value`)."""
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg in valued:
            skip = True
            continue
        if any(is_flag(arg, flag) for flag in (*valued, *switches)):
            continue
        kept.append(arg)
    return tuple(kept)


def canary_tests(canaries: Sequence[Canary]) -> str:
    """The canaries as `test(...)` calls, for a setup file that has bound `test`."""
    left, right = unequal()
    failure = json.dumps(f"expected {left} to equal {right}")
    return "".join(
        f"test({json.dumps(c.name)}, () => {{}});\n"
        if c.must_pass
        else f"test({json.dumps(c.name)}, () => {{\n  throw new Error({failure});\n}});\n"
        for c in canaries
    )


def files_without_canaries(canaries: Sequence[Canary]) -> Checks:
    """The check that every test file the report lists ran every canary."""
    patterns = [_name_pattern(c.name) for c in canaries]

    def check(result: ProcessResult, parsed: ParsedOutput) -> list[str]:
        files: dict[str, int] = {}
        for case in parsed.test_cases:
            if case.file is None:
                continue
            files.setdefault(case.file, 0)
            if any(p.search(case.name) for p in patterns):
                files[case.file] += 1
        silent = sorted(f for f, seen in files.items() if seen < len(patterns))
        if not silent:
            return []
        more = f" (and {len(silent) - 1} more)" if len(silent) > 1 else ""
        return [f"the test file {silent[0]}{more} lists tests but not the tests planted in it"]

    return check
