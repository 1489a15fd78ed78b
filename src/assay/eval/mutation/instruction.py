"""A generated task's instruction: a bug report written from the failing tests' names and
messages, as a user who saw them fail would file it. It never shows the change: no diff,
no line of the mutated code."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

#: Lines of one failure message kept, and characters per line.
MESSAGE_LINES = 3
LINE_CHARS = 160
#: Tests named in the report; the rest are counted.
NAMED_TESTS = 8
_DIFF_MARKS = ("+++", "---", "@@", "diff --git")


def bug_report(failures: Mapping[str, str], hidden: Iterable[bytes]) -> str:
    """The instruction for tests `failures` (test id -> failure message). Lines of a
    message that show any of `hidden` (the mutated and the original code) are left out."""
    secrets = [h.decode("utf-8", "replace").strip() for h in hidden]
    secrets = [s for s in secrets if len(s) >= 3]
    names = sorted(failures)
    lead = names[0].rsplit("::", 1)[-1]
    count = len(names)
    lines = [
        f"# `{lead}` fails" + (f" (and {count - 1} more)" if count > 1 else ""),
        "",
        (
            f"{count} tests of this repository fail:"
            if count > 1
            else "1 test of this repository fails:"
        ),
        "",
    ]
    for name in names[:NAMED_TESTS]:
        message = _message(failures[name], secrets)
        lines.append(f"- `{name}`" + (":" if message else ""))
        lines += [f"    {line}" for line in message]
    if count > NAMED_TESTS:
        lines.append(f"- ... and {count - NAMED_TESTS} more")
    lines += [
        "",
        (
            "The tests describe the intended behaviour and are correct: the bug is in the code "
            "they exercise. Find it and fix it so that these tests pass, without changing the "
            "tests and without breaking the ones that pass today."
        ),
        "",
    ]
    return "\n".join(lines)


def _message(text: str, secrets: list[str]) -> list[str]:
    kept = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(_DIFF_MARKS) or any(s in line for s in secrets):
            continue
        kept.append(line[:LINE_CHARS])
        if len(kept) == MESSAGE_LINES:
            break
    return kept
