"""A failed doctest as pytest reports it: the docstring's lines up to the failing example,
each after its line number, then what was expected and got (or the exception raised), then
`path:line: DocTestFailure`. The numbered context comes first, so a message cut to its first
lines showed only the docstring and never what went wrong (jaraco.functools' pass_none with
its check inverted: five lines of its docstring, no word of "Expected: text, Got nothing")."""

from __future__ import annotations

import re

#: pytest's closing line of a failed doctest: `/w/pkg/mod.py:411: DocTestFailure`.
_DOCTEST_END = re.compile(r":\d+: (?:DocTestFailure|UnexpectedException)\s*$")
#: A docstring line pytest shows as context: its line number, then the line (`411     >>> f()`).
_NUMBERED = re.compile(r"^\d+ ")


def doctest_message(message: str) -> str:
    """`message` with a failed doctest's numbered context cut to its failing example line
    (the last numbered one); any other message as it was."""
    lines = message.rstrip().splitlines()
    if not lines or not _DOCTEST_END.search(lines[-1]):
        return message
    # The context is the run of numbered lines the message opens with; what follows it is
    # the doctest's own output, which may hold such lines too.
    context = next((at for at, line in enumerate(lines) if not _NUMBERED.match(line)), 0)
    if context == 0:
        return message
    return "\n".join(lines[context - 1 :])
