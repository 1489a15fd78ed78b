"""Which JavaScript test hung: a reporter of assay's records each test as it starts and ends.

jest and vitest write their JSON report when the run ends, and on a pipe print a test
file's results only once the file is done: a run stopped at assay's deadline left neither,
and its note named no test ("npm-test printed nothing for 60 s and was stopped"). So the
run is given, beside the project's reporters, one of assay's (`jest_reporter_words`,
`vitest_reporter_words`): it appends a line to `<report>.started` as each test file and
each test starts and ends. The runners call reporters in their own process, told by their
workers: jest tells of a test as it starts, before its code runs; vitest batches what its
workers tell, so a test that never yields is seen only by its file. After a run stopped at
the deadline, `hung` names the tests started and not ended, else the files (a jest older
than 29.6 or a vitest older than 3 tells a reporter of files only).

The reporter is a file assay writes into its report directory (never the workspace),
created anew, following no link a check left there; its record is read as any report.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

#: Beside the JSON report: what the reporter recorded.
STARTED_SUFFIX = ".started"
#: Beside the JSON report: jest's reporter (CommonJS) and vitest's (an ES module).
JEST_REPORTER_SUFFIX = ".reporter.cjs"
VITEST_REPORTER_SUFFIX = ".reporter.mjs"

#: One JSON array a line: ["file", PATH] as a test file starts, ["case", PATH, FULL NAME]
#: as a test starts, ["done", PATH, FULL NAME] as it ends, ["filedone", PATH] as its file
#: does. Written with one descriptor kept open: a suite of thousands of tests pays a write
#: each, not an open. Any failure to write only loses the record. `RECORD` is its path.
_RECORDING = """\
let fd = null;
try { fd = fs.openSync(RECORD, "a"); } catch (e) {}
const note = (...words) => {
  if (fd === null) return;
  try { fs.writeSync(fd, JSON.stringify(words) + "\\n"); } catch (e) {}
};
"""
_JEST_REPORTER = (
    '"use strict";\nconst fs = require("fs");\n'
    + _RECORDING
    + """\
module.exports = class AssayStarted {
  onTestFileStart(test) { note("file", test.path); }
  onTestStart(test) { note("file", test.path); }
  onTestCaseStart(test, info) { note("case", test.path, info.fullName); }
  onTestCaseResult(test, result) { note("done", test.path, result.fullName); }
  onTestFileResult(test) { note("filedone", test.path); }
};
"""
)
#: vitest 3 and later tell of test modules and cases; 1 and 2, of the files collected and
#: of tasks' states by id.
_VITEST_REPORTER = (
    'import fs from "fs";\n'
    + _RECORDING
    + """\
const files = new Map();
const ended = ["pass", "fail", "skip", "todo"];
export default class AssayStarted {
  onCollected(collected) {
    for (const file of collected || []) {
      files.set(file.id, file.filepath);
      note("file", file.filepath);
    }
  }
  onTaskUpdate(packs) {
    for (const [id, result] of packs || []) {
      const file = files.get(id);
      if (file && result && ended.includes(result.state)) note("filedone", file);
    }
  }
  onTestModuleStart(module) { note("file", module.moduleId); }
  onTestCaseReady(test) { note("case", test.module.moduleId, test.fullName); }
  onTestCaseResult(test) { note("done", test.module.moduleId, test.fullName); }
  onTestModuleEnd(module) { note("filedone", module.moduleId); }
}
"""
)


def jest_reporter_words(argv: Sequence[str], report: Path) -> tuple[str, ...]:
    """The words that add assay's reporter to the jest run `argv`, whose JSON report is
    `report`: beside jest's default one, or beside those `argv` names (reporters named on
    the command line replace the configuration's). () when the reporter cannot be written."""
    reporter = _reporter(report, JEST_REPORTER_SUFFIX, _JEST_REPORTER)
    if reporter is None:
        return ()
    named = any(arg == "--reporters" or arg.startswith("--reporters=") for arg in argv)
    return (*(() if named else ("--reporters=default",)), f"--reporters={reporter}")


def vitest_reporter_words(report: Path) -> tuple[str, ...]:
    """The words that add assay's reporter to a vitest run whose JSON report is `report`
    (beside the JSON reporter assay asks for); () when it cannot be written."""
    reporter = _reporter(report, VITEST_REPORTER_SUFFIX, _VITEST_REPORTER)
    return () if reporter is None else (f"--reporter={reporter}",)


def _reporter(report: Path, suffix: str, template: str) -> Path | None:
    reporter = report.with_name(report.name + suffix)
    source = template.replace("RECORD", json.dumps(str(record_path(report))), 1)
    return reporter if _written_anew(reporter, source.encode()) else None


def record_path(report: Path) -> Path:
    """Where the reporter given for `report` records the tests it saw start."""
    return report.with_name(report.name + STARTED_SUFFIX)


def _written_anew(path: Path, data: bytes) -> bool:
    """Write `path` as a new file: whatever a check left there (a link to a file of the
    host's) is removed first, never followed; a name taken again meanwhile, or one that
    cannot be removed (a directory), is a failure."""
    with contextlib.suppress(OSError):
        os.unlink(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o644)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
    except OSError:
        return False
    return True


def hung(record: bytes, relative_to: str) -> tuple[str, ...]:
    """The tests `record` (the reporter's) shows started and not ended, as `FILE › NAME`
    with the file relative to `relative_to`; without single tests, the files."""
    from assay.parsers._text import relative

    started: dict[tuple[str, ...], None] = {}
    files: dict[str, None] = {}
    for line in record.decode("utf-8", "replace").splitlines():
        try:
            words = json.loads(line)
        except ValueError:
            continue  # the last line, cut as the run was stopped
        if not (isinstance(words, list) and all(isinstance(w, str) for w in words)):
            continue
        match words:
            case ["file", path]:
                files[path] = None
            case ["filedone", path]:
                files.pop(path, None)
            case ["case", path, name]:
                started[(path, name)] = None
            case ["done", path, name]:
                started.pop((path, name), None)
    if started:
        return tuple(f"{relative(path, relative_to)} › {name}" for path, name in started)
    return tuple(relative(path, relative_to) or path for path in files)
