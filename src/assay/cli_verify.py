"""`assay verify` without click: its plain forms parsed by hand, the verification run, its
report printed.

An agent calls `assay verify` after every edit, and most calls are cache hits
(`pipeline._remembered_hit`), which take less time than click takes to import. So
`assay.cli` hands `verify`'s arguments to `parse` first. Taken: one PATH, `--json`,
`--all`, `--no-cache`, and `--sandbox`, `--timeout`, `--deadline` and `--kind`
(repeatable), each as `--name value` or `--name=value`. Anything else (`--help`, `--base`,
`--install`, an unknown option, a value click would refuse, a second path, a file for
PATH) gets None, and click parses it, with its own messages; so does a usage error the
verification raises before anything ran. Both ways run `run`, which prints the same.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assay.cli_run import KINDS, SANDBOXES, say, write

if TYPE_CHECKING:
    from assay.live_progress import LineProgress
    from assay.report import Report

#: The options `parse` takes that are followed by a value.
_VALUED = ("--sandbox", "--timeout", "--deadline", "--kind")
#: ... and those that stand alone, with the field each sets.
_FLAGS = {"--json": "as_json", "--all": "all_tests", "--no-cache": "no_cache"}


@dataclass(frozen=True, slots=True)
class VerifyArgs:
    """`assay verify`'s arguments, as click would have given them."""

    path: str = "."
    as_json: bool = False
    timeout: float | None = None
    deadline: float | None = None
    sandbox: str = "auto"
    kinds: tuple[str, ...] = ()
    no_cache: bool = False
    base: str | None = None
    protect: bool = False
    install: bool = False
    all_tests: bool = False
    rerun_failures: int = 0
    junit_path: str | None = None
    sarif_path: str | None = None


def parse(args: list[str]) -> VerifyArgs | None:
    """`args` (after `verify`) when they are in a plain form this parser takes; else None."""
    values: dict[str, Any] = {}
    kinds: list[str] = []
    words = iter(args)
    for word in words:
        if word in _FLAGS:
            values[_FLAGS[word]] = True
            continue
        if not word.startswith("-"):
            if "path" in values:
                return None  # click: "unexpected extra argument"
            values["path"] = word
            continue
        name, equals, value = word.partition("=")
        if name not in _VALUED:
            return None
        if not equals:
            value = next(words, "")
        if not value or value.startswith("-"):
            return None  # a missing or odd value: click says what is wrong with it
        if name == "--kind":
            kinds.append(value)
        elif name == "--sandbox":
            values["sandbox"] = value
        elif (seconds := _seconds(value)) is None:
            return None
        else:
            values[name[2:]] = seconds
    if any(kind not in KINDS for kind in kinds) or values.get("sandbox", "auto") not in SANDBOXES:
        return None
    if os.path.isfile(values.get("path", ".")):
        return None  # click's message: a file is no project
    return VerifyArgs(**values, kinds=tuple(kinds))


def _seconds(text: str) -> float | None:
    """`text` as click's `float` type and the seconds check take it (`cli_commands`)."""
    try:
        seconds = float(text)
    except ValueError:
        return None
    return None if math.isnan(seconds) or seconds < 0 else seconds


def run(args: VerifyArgs) -> int:
    """Verify `args.path`, print the report, and give the exit code. Raises
    `VerifyUsageError` (nothing ran) for a path, options or configuration it refuses."""
    import sys

    from assay.pipeline import VerifyOptions, VerifyUsageError, internal_error_report
    from assay.pipeline import verify as run_verify
    from assay.verdict import Kind

    path = project_path(args.path)
    progress: LineProgress | None = None
    try:
        options = VerifyOptions(
            timeout_s=args.timeout or None,
            sandbox=args.sandbox,
            use_cache=not args.no_cache,
            base=args.base,
            protect=args.protect,
            kinds=frozenset(Kind(k) for k in args.kinds) or None,
            install=args.install,
            deadline_s=args.deadline or None,
            all_tests=args.all_tests,
            rerun_failures=args.rerun_failures,
        )
        if args.as_json:  # one JSON object on stdout, nothing else
            report = run_verify(path, options)
        else:
            from assay.live_progress import watching

            with watching(sys.stdout) as progress:
                report = run_verify(path, options, progress=progress)
    except VerifyUsageError:
        raise
    except Exception as exc:  # the library is fail-closed; this only guards the call itself
        report = internal_error_report(exc)
    _write_formats(report, args.junit_path, args.sarif_path)
    if report.record.swept:
        from assay.scratch import describe_sweep

        write(describe_sweep(report.record.swept), err=True)
    if args.as_json:
        emit_json(report.to_dict())
    else:
        _print_report(report, printed=progress.printed if progress else set())
    return report.exit_code


def project_path(path: str, doing: str = "verifying") -> str:
    """`path`, or the project it is inside when it is a directory below a project's top
    (`assay.repo_root`); says on stderr which directory is `doing` instead."""
    from pathlib import Path

    from assay.repo_root import project_root

    start = Path(path)
    if not start.is_dir():
        return path  # the pipeline says what is wrong with it
    choice = project_root(start.resolve())
    if not choice.why:
        return path
    say(f"assay: {doing} {choice.root} ({choice.why})", err=True)
    return str(choice.root)


def emit_json(document: dict[str, Any]) -> None:
    """`document` as indented JSON on stdout, shown (never obeyed) by the terminal."""
    import json  # here: a plain-text run never needs it

    from assay.terminal import json_for_terminal

    write(json_for_terminal(json.dumps(document, indent=2, ensure_ascii=False)))


def _write_formats(report: Report, junit_path: str | None, sarif_path: str | None) -> None:
    from pathlib import Path

    import assay.formats  # each format is loaded only when its file was asked for

    for target, name in ((junit_path, "render_junit"), (sarif_path, "render_sarif")):
        if target is None:
            continue
        render = getattr(assay.formats, name)
        try:
            Path(target).write_text(render(report), encoding="utf-8")
        except OSError as exc:
            say(f"assay: could not write {target}: {exc.strerror or exc}", err=True)


def _print_report(report: Report, *, printed: set[str]) -> None:
    """The report for a person; `printed`: summary lines already shown as checks ended."""
    from assay.formats import base_line, tampering_lines
    from assay.formats.failures import fail_fast_line, failure_lines, skipped_lines
    from assay.report import summary_line
    from assay.terminal import for_terminal

    for evidence in report.checks:
        if for_terminal(summary_line(evidence)) not in printed:
            say(summary_line(evidence))
    for line in skipped_lines(report.record.skipped, report.checks):
        say(line)
    shown: set[str] = set()  # one refusal (a sandbox that will not start) fails every check
    for evidence in report.checks:
        if evidence.passed:
            continue
        for line in failure_lines(evidence, shown=shown):
            say(line)
        if (stopped := fail_fast_line(evidence)) is not None:
            say(stopped)
    if (base := base_line(report)) is not None:
        say(base)
    for line in tampering_lines(report):
        say(line)
    say(f"{report.status.value}" + (" (cached)" if report.record.cached else ""))
    if report.note:
        say(f"note: {report.note}")
