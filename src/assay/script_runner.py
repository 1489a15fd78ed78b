"""The test runner a package script ends with: `"test": "jest --coverage"`, `"tsc && vitest"`.

Most JavaScript projects run their tests as `npm test`, a script that is one jest or vitest
command, or that runs one after the commands it needs first (`tsc && jest`). npm runs a
script through a shell and appends the words after its own `--` to it, so the script's
last command can be asked for its runner's JSON report, and given the canaries'
configuration, by words after `--`, while npm still runs the script as `npm test` does
(its `pretest` hook, its environment, the commands before). That holds only where the
commands are joined by `&&` and the last one is the runner: after any other operator
(`jest; lint`, `jest | tee`) the words would go elsewhere, and words the shell expands
(`$VAR`, `$(...)`) say nothing certain. What the commands before it run is not in the
runner's report; they only decide, by failing, that it does not run.

Read only, never run: the words come from the script's text, split as the shell would.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

#: The runners a script may be, by the name of the command that starts them.
RUNNERS = ("jest", "vitest")
#: The runners' entry points when node is named to run one (`node --flag node_modules/...`).
_ENTRY_POINTS = re.compile(
    r"(?:^|/)(?:\.bin/(jest|vitest)|(jest)/bin/jest\.js|(vitest)/vitest\.mjs)$"
)
#: `NAME=value` before a command: an environment variable the shell (or cross-env) sets.
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
#: Runs the rest of its words with the variables before them set (on any platform).
_ENV_SETTERS = ("cross-env", "env")
#: What a shell expands outside single quotes (inside double quotes too).
_EXPANDED = frozenset("$`")
#: What a shell reads as more than a word when it is not quoted (`&&` is taken apart).
_UNQUOTED_SYNTAX = frozenset(";&|<>(){}")
#: Words after which a runner cannot be asked for its JSON report too (it is asked
#: already, elsewhere), or does not run the tests once (watching, listing, configuring).
_UNREPORTED = {
    "jest": ("--json", "--outputFile", "--watch", "--watchAll", "--listTests", "--showConfig"),
    "vitest": ("--reporter", "--outputFile", "--watch", "-w", "--ui", "--standalone"),
}
#: vitest's commands other than running the tests once (`run`, or none under CI).
_VITEST_NOT_RUNS = frozenset({"watch", "dev", "bench", "init", "list", "typecheck"})


@dataclass(frozen=True, slots=True)
class ScriptRunner:
    """The runner a script is, and its words as written (`("jest", "--coverage")`)."""

    runner: str
    args: tuple[str, ...]
    """The words after the runner's name or entry point."""

    def given(self, argv: Sequence[str]) -> ScriptRunner:
        """The runner as npm's command line `argv` runs it: with the words it hands on
        after its own `--` (`npm test -- --coverage`) appended."""
        more = argv[list(argv).index("--") + 1 :] if "--" in argv else ()
        return ScriptRunner(self.runner, (*self.args, *more))

    def sets(self, flags: Sequence[str]) -> list[str]:
        """Which of `flags` its words give (`--flag` or `--flag=value`), in order."""
        return sorted({f for a in self.args for f in flags if a == f or a.startswith(f + "=")})

    @property
    def reports(self) -> bool:
        """Whether the words after these may ask the runner for its JSON report: it runs
        the tests once, and nothing here asks for a report already."""
        if self.runner == "vitest" and self.args[:1] and self.args[0] in _VITEST_NOT_RUNS:
            return False
        return not self.sets(_UNREPORTED[self.runner])


def script_runner(script: str) -> ScriptRunner | None:
    """`script`'s runner when its last command (alone, or after others joined by `&&`)
    runs jest or vitest, else None."""
    if "\n" in script or _shell_syntax(script.replace("&&", " ")):
        return None
    try:
        words = shlex.split(script)
    except ValueError:
        return None
    if "&&" in words:  # the words npm appends go to the last command
        words = words[len(words) - words[::-1].index("&&") :]
    while words and (_ASSIGNMENT.match(words[0]) or os.path.basename(words[0]) in _ENV_SETTERS):
        words = words[1:]
    if not words:
        return None
    name = os.path.basename(words[0])
    if name in RUNNERS:
        return ScriptRunner(name, tuple(words[1:]))
    if name not in ("node", "nodejs"):
        return None
    # `node [node's flags] ENTRY [args]`: a flag with a separate value would be taken
    # for the entry point, and then it is not one; so nothing is guessed.
    for at, word in enumerate(words[1:], start=1):
        if word.startswith("-"):
            continue
        found = _ENTRY_POINTS.search(word.replace(os.sep, "/"))
        if found is None:
            return None
        runner = next(group for group in found.groups() if group)
        return ScriptRunner(runner, tuple(words[at + 1 :]))
    return None


def _shell_syntax(script: str) -> bool:
    """Whether `script` holds what a shell would expand (`$`, a backquote, outside single
    quotes) or read as syntax (an operator, a redirection, a group; outside any quotes).
    Quoted words are words: `--coverageThreshold="{ \\"global\\": ... }"` (dayjs)."""
    quote = ""
    escaped = False
    for char in script:
        if escaped:
            escaped = False
        elif char == "\\" and quote != "'":
            escaped = True
        elif quote:
            if char == quote:
                quote = ""
            elif quote == '"' and char in _EXPANDED:
                return True
        elif char in "'\"":
            quote = char
        elif char in _EXPANDED or char in _UNQUOTED_SYNTAX:
            return True
    return False
