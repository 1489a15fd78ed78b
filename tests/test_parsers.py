"""Parsers on plain values: what each tool prints, into diagnostics and test counts."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from assay.classify import classify
from assay.evidence import Check, Diagnostic
from assay.parsers import ParsedOutput, parse_output, report_path
from assay.parsers._text import json_document, json_lines
from assay.process import ProcessResult
from assay.verdict import Cause, Kind, Verdict
from tests.repos import write
from tests.results import process_result

CWD = "/work/proj"


def result(stdout: str = "", stderr: str = "", exit_code: int | None = 1) -> ProcessResult:
    return process_result(("x",), cwd=CWD, exit_code=exit_code, stdout=stdout, stderr=stderr)


def check(
    tool: str, argv: tuple[str, ...] = ("x",), kind: Kind = Kind.LINT, name: str | None = None
) -> Check:
    return Check(name=name or tool, kind=kind, argv=argv, tool=tool)


def only(parsed: ParsedOutput) -> Diagnostic:
    assert len(parsed.diagnostics) == 1, parsed.diagnostics
    return parsed.diagnostics[0]


def where(d: Diagnostic) -> tuple[str | None, int | None, int | None, str | None, str]:
    return (d.file, d.line, d.column, d.code, d.severity)


# --------------------------------------------------------------------------- diagnostics


def test_mypy_json_lines() -> None:
    line = json.dumps(
        {
            "file": "a.py",
            "line": 3,
            "column": 9,
            "message": "Incompatible",
            "code": "assignment",
            "severity": "error",
        }
    )
    d = only(parse_output(check("mypy"), result(line + "\n")))
    assert where(d) == ("a.py", 3, 9, "assignment", "error") and d.tool == "mypy"


def test_mypy_text_fallback() -> None:
    text = (
        "a.py:3: error: Incompatible types in assignment  [assignment]\nFound 1 error in 1 file\n"
    )
    d = only(parse_output(check("mypy"), result(text)))
    assert where(d) == ("a.py", 3, None, "assignment", "error")


def test_mypy_pretty_messages_are_read_whole() -> None:
    """`pretty = true` wraps a message over lines and shows the source under it (mypy 2.1's
    own output); the continuation was lost, and with it the module name and the code."""
    text = (
        "src/version.py:1: error: Cannot find implementation or library stub for module\n"
        'named "fast_semver_rs_backend"  [import-not-found]\n'
        "    from fast_semver_rs_backend import thing  # long enough line to wrap\n"
        "    ^\n"
        "src/version.py:1: note: See https://mypy.readthedocs.io/en/stable/running_mypy.html\n"
        "src/version.py:3: error: Incompatible types in assignment (expression has type\n"
        '"str", variable has type "int")  [assignment]\n'
        '    x: int = "a"\n'
        "             ^~~\n"
        "Found 2 errors in 1 file (checked 1 source file)\n"
    )
    missing, note, assignment = parse_output(check("mypy"), result(text)).diagnostics
    assert missing.message == (
        'Cannot find implementation or library stub for module named "fast_semver_rs_backend"'
    )
    assert where(missing) == ("src/version.py", 1, None, "import-not-found", "error")
    assert note.severity == "note" and note.message.startswith("See https://")
    assert assignment.message.endswith('(expression has type "str", variable has type "int")')
    assert assignment.code == "assignment"


@pytest.mark.parametrize(
    ("text", "crashed"),
    [
        (
            # mypy 2.4's own words when a plugin's hook raised
            (
                "pkg/__init__.py:4: error: INTERNAL ERROR -- Please try using mypy master on "
                "GitHub:\nhttps://mypy.readthedocs.io/en/stable/common_issues.html\nversion: "
                "2.4.1\npkg/__init__.py:4: note: please use --show-traceback to print a "
                "traceback when reporting a bug\n"
            ),
            True,
        ),
        ("error: INTERNAL ERROR: maximum semantic analysis iteration count reached\n", True),
        ('a.py:3: error: Name "INTERNAL" is not defined  [name-defined]\n', False),
        ('a.py:3: note: Revealed type is "error: INTERNAL ERROR"\n', False),
    ],
)
def test_a_crash_of_mypy_is_not_the_codes_failure(text: str, crashed: bool) -> None:
    """mypy crashing (two processes writing one cache, a bug of its own) exits 2, as it
    does for a syntax error in the code: only its words tell the crash from a finding."""
    typecheck = check("mypy", kind=Kind.TYPECHECK)
    parsed = parse_output(typecheck, result(stderr=text, exit_code=2))
    assert (parsed.tool_crashed is not None) is crashed
    evidence = classify(typecheck, result(stderr=text, exit_code=2), parsed)
    assert evidence.verdict is (Verdict.INCONCLUSIVE if crashed else Verdict.FAIL)
    if crashed:
        assert "crashed in its own code" in (evidence.note or "")


def test_biome_findings_with_their_rule_and_place_hyperlinks_and_all() -> None:
    """Biome 2.6's `ci` output as the sandbox showed it: its rule names are hyperlinks
    (`ESC ] 8 ;; URL ESC \\`), which the note had shown raw."""
    link = "\x1b]8;;https://biomejs.dev/assist/actions/organize-imports\x1b\\"
    text = (
        f"add.test.mjs:1:1 {link}assist/source/organizeImports\x1b]8;;\x1b\\  FIXABLE  \u2501\u2501\n"
        "\n  \u00d7 The imports and exports are not sorted.\n\n"
        "lib.mjs format \u2501\u2501\u2501\n\n  \u00d7 Formatter would have printed the following content:\n"
        "ci \u2501\u2501\u2501\n\n  \u00d7 Some errors were emitted while running checks.\n"
    )
    parsed = parse_output(
        check("biome", ("biome", "ci", "."), Kind.LINT), result(text, exit_code=1)
    )
    found = [(d.file, d.line, d.code, d.severity, d.message) for d in parsed.diagnostics]
    assert found == [
        (
            "add.test.mjs",
            1,
            "assist/source/organizeImports",
            "error",
            "The imports and exports are not sorted.",
        ),
        ("lib.mjs", None, "format", "error", "Formatter would have printed the following content:"),
    ]
    assert parsed.failure_recognized


def test_pyright_json_is_one_based() -> None:
    doc = {
        "generalDiagnostics": [
            {
                "file": f"{CWD}/a.py",
                "severity": "error",
                "message": "bad",
                "range": {"start": {"line": 0, "character": 4}},
                "rule": "reportGeneralTypeIssues",
            }
        ]
    }
    d = only(parse_output(check("pyright"), result(json.dumps(doc))))
    assert where(d) == ("a.py", 1, 5, "reportGeneralTypeIssues", "error")


def test_ruff_json_with_absolute_paths_made_relative() -> None:
    doc = [
        {
            "code": "F401",
            "message": "`os` imported but unused",
            "filename": f"{CWD}/pkg/a.py",
            "location": {"row": 1, "column": 8},
        }
    ]
    d = only(parse_output(check("ruff"), result(json.dumps(doc))))
    assert where(d) == ("pkg/a.py", 1, 8, "F401", "error")


@pytest.mark.parametrize(
    ("text", "items"),
    [
        ('noise [{"a": 1}, {"b": [2, 3]}]', [{"a": 1}, {"b": [2, 3]}]),
        ('[\n  {"a": 1},\n  {"b": 2},\n  {"c": [3, ', [{"a": 1}, {"b": 2}]),  # cut short
        ("[]", []),
        ("no array here", []),
        ("[1, oops, 3]", [1]),
    ],
)
def test_json_array_items_reads_up_to_a_cut(text: str, items: list[object]) -> None:
    from assay.parsers._text import json_array_items

    assert list(json_array_items(text)) == items


def test_ruff_syntax_error_gets_a_code() -> None:
    doc = [
        {
            "code": None,
            "message": "SyntaxError: bad",
            "filename": "a.py",
            "location": {"row": 2, "column": 1},
        }
    ]
    assert only(parse_output(check("ruff"), result(json.dumps(doc)))).code == "syntax-error"


def test_a_number_str_isdigit_accepts_but_int_refuses_does_not_lose_the_report() -> None:
    doc = [{"code": "F401", "message": "m", "filename": "a.py", "location": {"row": "²"}}]
    d = only(parse_output(check("ruff"), result(json.dumps(doc))))
    assert (d.code, d.line) == ("F401", None)


# What `ruff format --check` / `--diff` print for a file it would change, old and new ruff.
_RUFF_FULL = (
    "unformatted: File would be reformatted\n --> src/pkg/keys.py:22:29\n   |\n"
    "21 |\n   - def f() :\n22 + def f():\n"
    "--------------------------------------------------------------------------------\n"
)
_RUFF_DIFF = "--- src/pkg/keys.py\n+++ src/pkg/keys.py\n@@ -1 +1 @@\n-x = ( 1,2 )\n+x = (1, 2)\n"


@pytest.mark.parametrize(
    ("argv", "stdout", "stderr", "line"),
    [
        (("ruff", "format", "--check"), _RUFF_FULL, "1 file would be reformatted", 22),
        (("ruff", "format", "--check"), "", "Would reformat: src/pkg/keys.py\n", None),
        (("ruff", "format", "--check"), "src/pkg/keys.py:22:29: unformatted: File would", "", 22),
        (("ruff", "format", "--diff", "-q"), _RUFF_DIFF, "", None),
        (
            ("ruff", "format", "--diff"),
            _RUFF_DIFF + _RUFF_DIFF,
            "1 file would be reformatted",
            None,
        ),
    ],
)
def test_ruff_format_names_each_file_it_would_change(
    argv: tuple[str, ...], stdout: str, stderr: str, line: int | None
) -> None:
    d = only(parse_output(check("ruff", argv), result(stdout, stderr)))
    assert (d.file, d.line, d.message) == ("src/pkg/keys.py", line, "would be reformatted")
    assert d.place == ("src/pkg/keys.py" if line is None else "src/pkg/keys.py:22")


def test_ruff_format_with_nothing_to_change_names_nothing() -> None:
    parsed = parse_output(
        check("ruff", ("ruff", "format", "--check")), result("", "3 files left unchanged", 0)
    )
    assert parsed.diagnostics == ()


def test_compileall_syntax_error() -> None:
    text = "*** Error compiling './a.py'...\n  File \"./a.py\", line 2\n    def f(:\n          ^\nSyntaxError: invalid syntax\n"
    d = only(parse_output(check("compileall", kind=Kind.BUILD), result(text)))
    assert where(d) == ("a.py", 2, None, "SyntaxError", "error")


@pytest.mark.parametrize("quiet", [True, False])
def test_compileall_syntax_error_from_a_real_run(tmp_path: Path, quiet: bool) -> None:
    """Without `-q` (wcwidth's tox states `python -m compileall wcwidth`), compileall lists
    every file and marks the error's first line with stars instead of a header."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    (tmp_path / "pkg" / "b.py").write_text("def f(:\n    pass\n")
    argv = [sys.executable, "-m", "compileall", *(["-q"] if quiet else []), "pkg"]
    ran = _ran(argv, tmp_path)
    assert ran.exit_code == 1
    d = only(parse_output(check("compileall", tuple(argv), kind=Kind.BUILD), ran))
    assert (d.file, d.line, d.code) == ("pkg/b.py", 1, "SyntaxError"), d


@pytest.mark.parametrize(
    "line",
    [
        "src/a.ts(1,7): error TS2322: Type 'string' is not assignable to type 'number'.",
        "\x1b[96msrc/a.ts\x1b[0m:\x1b[93m1\x1b[0m:\x1b[93m7\x1b[0m - \x1b[91merror\x1b[0m\x1b[90m TS2322: \x1b[0mType 'string' is not assignable to type 'number'.",
    ],
    ids=["plain", "pretty"],
)
def test_tsc_text(line: str) -> None:
    d = only(parse_output(check("tsc"), result(line + "\n")))
    assert where(d) == ("src/a.ts", 1, 7, "TS2322", "error")


def test_tsc_global_error_without_file() -> None:
    d = only(
        parse_output(
            check("tsc"), result("error TS5058: The specified path does not exist: 'x'.\n")
        )
    )
    assert (d.file, d.code) == (None, "TS5058")


def test_eslint_json() -> None:
    doc = [
        {
            "filePath": f"{CWD}/c.js",
            "messages": [
                {
                    "ruleId": "no-unused-vars",
                    "severity": 2,
                    "message": "'z' is unused",
                    "line": 1,
                    "column": 7,
                },
                {
                    "ruleId": None,
                    "severity": 2,
                    "fatal": True,
                    "message": "Parsing error",
                    "line": 4,
                    "column": 1,
                },
                {
                    "ruleId": "semi",
                    "severity": 1,
                    "message": "Missing semicolon",
                    "line": 5,
                    "column": 2,
                },
            ],
        }
    ]
    parsed = parse_output(check("eslint"), result(json.dumps(doc)))
    assert [where(d) for d in parsed.diagnostics] == [
        ("c.js", 1, 7, "no-unused-vars", "error"),
        ("c.js", 4, 1, "syntax-error", "error"),
        ("c.js", 5, 2, "semi", "warning"),
    ]


def test_go_build_and_vet_text() -> None:
    text = "# example.com/tiny\n./typed.go:3:16: cannot use Add(1, 2) (value of type int) as string value\nvet: ./vet.go:6:9: bad format\n"
    parsed = parse_output(check("go", ("go", "build", "./...")), result(stderr=text))
    assert [(d.file, d.line, d.column) for d in parsed.diagnostics] == [
        ("typed.go", 3, 16),
        ("vet.go", 6, 9),
    ]


def test_cargo_json_messages_primary_span_and_dedup() -> None:
    message = {
        "reason": "compiler-message",
        "message": {
            "level": "error",
            "message": "mismatched types",
            "code": {"code": "E0308"},
            "spans": [
                {
                    "file_name": "src/other.rs",
                    "line_start": 9,
                    "column_start": 1,
                    "is_primary": False,
                },
                {"file_name": "src/lib.rs", "line_start": 5, "column_start": 5, "is_primary": True},
            ],
        },
    }
    abort = {
        "reason": "compiler-message",
        "message": {"level": "error", "message": "aborting due to 1 previous error", "spans": []},
    }
    stdout = "\n".join(json.dumps(m) for m in (message, message, abort))
    d = only(parse_output(check("cargo", ("cargo", "build"), Kind.BUILD), result(stdout)))
    assert where(d) == ("src/lib.rs", 5, 5, "E0308", "error")


def test_rustc_text_fallback() -> None:
    text = "error[E0308]: mismatched types\n --> src/main.rs:2:18\n  |\n"
    d = only(parse_output(check("cargo", ("cargo", "build"), Kind.BUILD), result(stderr=text)))
    assert where(d) == ("src/main.rs", 2, 18, "E0308", "error")


# --------------------------------------------------------------------------- tests


def junit(tmp_path: Path, name: str, body: str) -> Path:
    path = report_path(tmp_path, check("pytest", name=name), "xml")
    path.write_text(f'<?xml version="1.0"?><testsuites><testsuite>{body}</testsuite></testsuites>')
    return path


def test_pytest_junit_counts_testcases(tmp_path: Path) -> None:
    junit(
        tmp_path,
        "pytest",
        '<testcase classname="t" name="a"/><testcase classname="t" name="b"><failure message="boom"/></testcase>'
        '<testcase classname="t" name="c"><skipped/></testcase><testcase classname="t" name="d"><error message="e"/></testcase>',
    )
    parsed = parse_output(check("pytest", kind=Kind.TEST), result("9 passed in 0.1s"), tmp_path)
    assert parsed.tests is not None and parsed.report_found
    assert (
        parsed.tests.passed,
        parsed.tests.failed,
        parsed.tests.skipped,
        parsed.tests.errors,
    ) == (1, 1, 1, 1)
    assert parsed.tests.source == "junit"
    assert [c.outcome for c in parsed.test_cases] == ["passed", "failed", "skipped", "error"]


def test_pytest_missing_report_gives_no_counts_even_if_text_claims_passes(tmp_path: Path) -> None:
    parsed = parse_output(
        check("pytest", kind=Kind.TEST),
        result("===== 5 passed in 0.01s =====", exit_code=0),
        tmp_path,
    )
    assert parsed.tests is None and not parsed.report_found
    evidence = classify(check("pytest", kind=Kind.TEST), result("5 passed", exit_code=0), parsed)
    assert (evidence.verdict, evidence.cause) == (Verdict.INCONCLUSIVE, Cause.NO_TESTS_OBSERVED)


def test_pytest_hostile_xml_is_refused(tmp_path: Path) -> None:
    path = report_path(tmp_path, check("pytest"), "xml")
    path.write_text(
        '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]>'
        '<testsuites><testsuite><testcase name="&b;"/></testsuite></testsuites>'
    )
    parsed = parse_output(check("pytest", kind=Kind.TEST), result(exit_code=0), tmp_path)
    assert parsed.tests is None


def test_pytest_text_summary_without_report_dir() -> None:
    parsed = parse_output(
        check("pytest", kind=Kind.TEST), result("== 1 failed, 2 passed, 1 skipped in 0.3s ==")
    )
    assert parsed.tests is not None
    assert (parsed.tests.passed, parsed.tests.failed, parsed.tests.skipped) == (2, 1, 1)
    assert parsed.failure_recognized


def test_pytest_exit_5_is_no_tests() -> None:
    parsed = parse_output(
        check("pytest", kind=Kind.TEST), result("no tests ran in 0.01s", exit_code=5)
    )
    assert parsed.no_tests_reported
    evidence = classify(check("pytest", kind=Kind.TEST), result(exit_code=5), parsed)
    assert evidence.cause is Cause.NO_TESTS_OBSERVED


def test_go_test_json_events() -> None:
    events = [
        {"Action": "run", "Package": "p", "Test": "TestA"},
        {"Action": "pass", "Package": "p", "Test": "TestA", "Elapsed": 0.01},
        {"Action": "output", "Package": "p", "Test": "TestB", "Output": "x_test.go:5: no\n"},
        {"Action": "fail", "Package": "p", "Test": "TestB"},
        {"Action": "skip", "Package": "p", "Test": "TestC"},
        {"Action": "fail", "Package": "p"},
    ]
    parsed = parse_output(
        check("go", ("go", "test", "-json"), Kind.TEST), result("\n".join(map(json.dumps, events)))
    )
    assert parsed.tests is not None and parsed.tests.source == "go-json"
    assert (parsed.tests.passed, parsed.tests.failed, parsed.tests.skipped) == (1, 1, 1)
    failed = [c for c in parsed.test_cases if c.outcome == "failed"]
    assert failed[0].message is not None and "no" in failed[0].message


def test_a_long_go_failure_message_keeps_whole_lines() -> None:
    """btree's ExampleBTreeG: its message began `reeG`, what was left of `=== RUN   ExampleBTreeG`
    after its last 500 characters were taken."""
    lines = ["=== RUN   ExampleBTreeG\n", "--- FAIL: ExampleBTreeG (0.00s)\n", "got:\n"]
    lines += [f"line {n}: {'x' * 20}\n" for n in range(30)]
    events = [
        {"Action": "output", "Package": "p", "Test": "ExampleBTreeG", "Output": o} for o in lines
    ]
    events.append({"Action": "fail", "Package": "p", "Test": "ExampleBTreeG"})
    parsed = parse_output(
        check("go", ("go", "test", "-json"), Kind.TEST), result("\n".join(map(json.dumps, events)))
    )
    (failed,) = parsed.test_cases
    assert failed.message is not None and failed.message.startswith("line ")
    assert failed.message.endswith("x" * 20 + "\n") and len(failed.message) <= 500


def test_go_test_build_failure_is_recognized() -> None:
    stdout = json.dumps({"Action": "fail", "Package": "p"}) + "\n"
    parsed = parse_output(
        check("go", ("go", "test", "-json"), Kind.TEST),
        result(stdout, stderr="./a.go:3:1: syntax error\n"),
    )
    assert parsed.failure_recognized and only(parsed).line == 3


def test_jest_json_report(tmp_path: Path) -> None:
    doc = {
        "testResults": [
            {
                "name": f"{CWD}/a.test.js",
                "status": "failed",
                "assertionResults": [
                    {"fullName": "adds", "status": "passed", "duration": 3},
                    {"fullName": "breaks", "status": "failed", "failureMessages": ["expected 1"]},
                    {"fullName": "later", "status": "pending"},
                ],
            }
        ]
    }
    c = check("jest", kind=Kind.TEST)
    report_path(tmp_path, c, "json").write_text(json.dumps(doc))
    parsed = parse_output(c, result(), tmp_path)
    assert parsed.tests is not None and parsed.report_found
    assert (parsed.tests.passed, parsed.tests.failed, parsed.tests.skipped) == (1, 1, 1)
    assert parsed.test_cases[1].file == "a.test.js"


def test_jest_counts_every_test_file_that_failed_to_load_and_says_why(tmp_path: Path) -> None:
    unloaded = {"status": "failed", "assertionResults": [], "name": f"{CWD}/a.test.js"}
    why = "  \u25cf Test suite failed to run\n\n    ENOENT: no such file or directory, open 'x'"
    doc = {
        "testResults": [
            unloaded,
            {**unloaded, "name": f"{CWD}/b.test.js", "message": why},
            {"assertionResults": [{"status": "passed"}]},
        ]
    }
    c = check("jest", kind=Kind.TEST)
    report_path(tmp_path, c, "json").write_text(json.dumps(doc))
    parsed = parse_output(c, result(), tmp_path)
    assert parsed.tests is not None and (parsed.tests.passed, parsed.tests.errors) == (1, 2)
    # After the tests: a test's failure is the one a note names first.
    passed, first, second = parsed.test_cases
    assert passed.outcome == "passed"
    # Marked as a module pytest could not collect is: the note says the file ran no test.
    assert (first.name, first.outcome, first.message) == (
        "a.test.js",
        "error",
        "collection failure",
    )
    assert second.message is not None and "ENOENT: no such file" in second.message
    assert second.message.startswith("collection failure: ")
    # It stands for no test of the file's: no test is listed in it.
    assert first.file is None and second.file is None


def test_vitest_names_lose_the_space_an_empty_file_title_leaves(tmp_path: Path) -> None:
    doc = {"testResults": [{"assertionResults": [{"status": "passed", "fullName": " adds sync"}]}]}
    c = check("vitest", kind=Kind.TEST)
    report_path(tmp_path, c, "json").write_text(json.dumps(doc))
    assert [t.name for t in parse_output(c, result(), tmp_path).test_cases] == ["adds sync"]


def test_a_script_ending_with_jest_that_wrote_no_report_is_read_from_its_output(
    tmp_path: Path,
) -> None:
    """dayjs runs jest on its time zone tests before the jest whose report is asked for:
    when one of those fails, the script stops, and what it printed is what there is."""
    printed = "Tests:       1 failed, 53 passed, 54 total\n"
    c = check("npm-jest", ("npm", "run", "test"), kind=Kind.TEST)
    parsed = parse_output(c, result(stderr=printed), tmp_path)
    assert not parsed.report_found
    assert parsed.tests is not None and (parsed.tests.passed, parsed.tests.failed) == (53, 1)
    doc = {"testResults": [{"assertionResults": [{"status": "passed", "fullName": "adds"}]}]}
    report_path(tmp_path, c, "json").write_text(json.dumps(doc))
    parsed = parse_output(c, result(stderr=printed), tmp_path)
    assert parsed.tests is not None and (parsed.tests.passed, parsed.tests.source) == (
        1,
        "jest-json",
    )


def test_vitest_missing_report_has_no_counts(tmp_path: Path) -> None:
    parsed = parse_output(
        check("vitest", kind=Kind.TEST), result("Tests 3 passed", exit_code=0), tmp_path
    )
    assert parsed.tests is None


def test_cargo_test_text_sums_every_binary() -> None:
    text = (
        "test tests::a ... ok\ntest tests::b ... FAILED\n"
        "test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n"
        "test result: ok. 2 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s\n"
    )
    parsed = parse_output(check("cargo", ("cargo", "test"), Kind.TEST), result(text))
    assert parsed.tests is not None
    assert (parsed.tests.passed, parsed.tests.failed, parsed.tests.skipped) == (3, 1, 1)
    assert [c.outcome for c in parsed.test_cases] == ["passed", "failed"]


#: A `cargo test --message-format=json` run stopped at assay's deadline, as libtest left it
#: (servo/rust-fnv with a loop in the hash): a warning, the build's end, one test passed and
#: one that said, a minute in, that it still ran.
CARGO_HUNG = (
    '{"reason":"compiler-message","message":{"rendered":"warning: variable does not need '
    'to be mutable\\n --> lib.rs:150:9\\n","level":"warning","message":"variable does not '
    'need to be mutable","spans":[]}}\n'
    '{"reason":"build-finished","success":true}\n\n'
    "running 2 tests\ntest test::basic_tests ... ok\n"
    "test test::fnv_hash_standalone has been running for over 60 seconds\n"
)


@pytest.mark.parametrize("stopped", [True, False])
def test_a_cargo_test_stopped_at_the_deadline_names_the_test_still_running(stopped: bool) -> None:
    ran = process_result(
        ("cargo", "test"), cwd=CWD, exit_code=None, stdout=CARGO_HUNG, timed_out=stopped
    )
    parsed = parse_output(check("cargo", ("cargo", "test"), Kind.TEST), ran)
    assert parsed.hung_tests == (("test::fnv_hash_standalone",) if stopped else ())
    # What is shown of it is what cargo prints: the message rendered, no JSON.
    assert parsed.printed is not None and '"reason"' not in parsed.printed
    assert parsed.printed.startswith("warning: variable does not need to be mutable\n --> lib.rs")
    assert parsed.printed.endswith("has been running for over 60 seconds\n")


def test_cargo_doc_tests_are_listed_as_cases() -> None:
    text = (
        "test src/lib.rs - add (line 3) ... ok\n"
        "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n"
    )
    parsed = parse_output(check("cargo", ("cargo", "test"), Kind.TEST), result(text, exit_code=0))
    assert [(c.name, c.outcome) for c in parsed.test_cases] == [
        ("src/lib.rs - add (line 3)", "passed")
    ]


def test_node_test_tap_summary() -> None:
    text = "ok 1 - a\nnot ok 2 - b\n  ---\n  ...\nok 3 - c # SKIP\n1..3\n# tests 3\n# pass 1\n# fail 1\n# cancelled 0\n# skipped 1\n# todo 0\n"
    parsed = parse_output(check("node-test", kind=Kind.TEST), result(text))
    assert parsed.tests is not None
    assert (parsed.tests.passed, parsed.tests.failed, parsed.tests.skipped) == (1, 1, 1)
    assert [c.outcome for c in parsed.test_cases] == ["passed", "failed", "skipped"]


def test_node_test_spec_summary_with_no_tests() -> None:
    parsed = parse_output(
        check("node-test", kind=Kind.TEST), result("ℹ tests 0\nℹ pass 0\nℹ fail 0\n", exit_code=0)
    )
    assert parsed.no_tests_reported and parsed.tests is not None and parsed.tests.executed == 0


def test_node_test_summary_forged_on_stderr_does_not_count() -> None:
    """stderr follows stdout in the combined text, so a forged summary there would win."""
    real = "1..0\n# tests 0\n# pass 0\n# fail 0\n"
    c = check("node-test", kind=Kind.TEST)
    parsed = parse_output(c, result(real, "# tests 3\n# pass 3\n", exit_code=0))
    assert parsed.tests is not None and parsed.tests.executed == 0
    assert classify(c, result(exit_code=0), parsed).verdict is not Verdict.PASS


@pytest.mark.parametrize(
    ("text", "counts"),
    [
        ("...\nRan 3 tests in 0.001s\n\nOK\n", (3, 0, 0, 0)),
        ("Ran 4 tests in 0.01s\n\nFAILED (failures=1, errors=1, skipped=1)\n", (1, 1, 1, 1)),
        ("Ran 0 tests in 0.000s\n\nNO TESTS RAN\n", (0, 0, 0, 0)),
    ],
)
def test_unittest_summary(text: str, counts: tuple[int, int, int, int]) -> None:
    parsed = parse_output(check("unittest", kind=Kind.TEST), result(stderr=text))
    assert parsed.tests is not None
    t = parsed.tests
    assert (t.passed, t.failed, t.errors, t.skipped) == counts


SUBTESTS = """\
import unittest


class T(unittest.TestCase):
    def test_skips_a_subtest(self):
        for i in range(3):
            with self.subTest(i=i):
                if i == 1:
                    self.skipTest("no engine")

    def test_documented(self):
        \"\"\"Each engine, or those installed.\"\"\"
        for i in range(2):
            with self.subTest(i=i):
                self.skipTest("not installed")

    def test_fails_a_subtest(self):
        for i in range(2):
            with self.subTest(i=i):
                self.assertEqual(i, 0)

    def test_plain(self):
        pass
"""


def test_unittest_subtests_are_their_tests_not_tests_of_their_own(tmp_path: Path) -> None:
    """pathspec 1.1.1: a test that skips the subtests of engines not installed ran, and
    passed; it was counted skipped (46 of 197), and one failing in the wrong tree was one
    of those 46. Real `python -m unittest -v` output, with and without a docstring line."""
    (tmp_path / "test_sub.py").write_text(SUBTESTS)
    done = subprocess.run(
        [sys.executable, "-m", "unittest", "-v", "test_sub"],
        check=False,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    c = check("unittest", ("python3", "-m", "unittest", "-v"), kind=Kind.TEST)
    parsed = parse_output(c, result(done.stdout, done.stderr, done.returncode))
    outcomes = {case.name.rsplit(".", 1)[-1]: case.outcome for case in parsed.test_cases}
    assert outcomes == {
        "test_skips_a_subtest": "passed",
        "test_documented": "passed",
        "test_fails_a_subtest": "failed",
        "test_plain": "passed",
    }, done.stderr
    t = parsed.tests
    assert t is not None and (t.passed, t.failed, t.skipped) == (3, 1, 0), (t, done.stderr)


def test_a_run_without_listing_names_its_failures_from_their_headers(tmp_path: Path) -> None:
    """distlib's `python tests/test_all.py` runs unittest without `-v`: "9 of 258 tests
    failed" named none of them, though each failure's header names its test."""
    (tmp_path / "test_sub.py").write_text(SUBTESTS)
    done = subprocess.run(
        [sys.executable, "-m", "unittest", "test_sub"],
        check=False,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    c = check("unittest", ("python3", "tests/run_all.py"), kind=Kind.TEST)
    parsed = parse_output(c, result(done.stdout, done.stderr, done.returncode))
    assert [(case.name, case.outcome) for case in parsed.test_cases] == [
        ("test_sub.T.test_fails_a_subtest", "failed")
    ], done.stderr
    t = parsed.tests
    assert t is not None and (t.passed, t.failed) == (3, 1), (t, done.stderr)


FAILING = """\
import unittest


class T(unittest.TestCase):
    def test_wrong_value(self):
        self.assertEqual({}, {"one": 1})

    def test_chained(self):
        try:
            {}["key"]
        except KeyError:
            raise ValueError("no key in the table")

    def test_subtests(self):
        for i in range(2):
            with self.subTest(i=i):
                self.assertEqual(i, 5)

    def test_plain(self):
        pass
"""


#: A test with a docstring: its first line comes between the failure's header and rule.
_DESCRIBED = """
    def test_described(self):
        "Its first line comes between the header and the rule."
        self.assertEqual(12, 11)
"""


@pytest.mark.parametrize("verbose", [True, False])
def test_unittest_failures_carry_their_file_and_exception(tmp_path: Path, verbose: bool) -> None:
    """tomli's four failing unittest cases were named with no message: each failure's block
    in unittest's listing has the test's file and the exception it ended with."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "__init__.py").write_text("")
    (tmp_path / "tests" / "test_fail.py").write_text(FAILING + _DESCRIBED)
    argv = [sys.executable, "-m", "unittest", *(["-v"] if verbose else []), "tests.test_fail"]
    done = subprocess.run(
        argv, check=False, cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    c = check("unittest", ("python3", *argv[1:]), kind=Kind.TEST)
    run = process_result(
        c.argv, cwd=str(tmp_path), exit_code=done.returncode, stdout=done.stdout, stderr=done.stderr
    )
    parsed = parse_output(c, run)
    cases = {case.name.rsplit(".", 1)[-1]: case for case in parsed.test_cases}
    wrong, chained, subtests = (
        cases["test_wrong_value"],
        cases["test_chained"],
        cases["test_subtests"],
    )
    assert wrong.file == chained.file == "tests/test_fail.py", done.stderr
    assert wrong.message is not None and wrong.message.startswith(
        "AssertionError: {} != {'one': 1}\n- {}\n+ {'one': 1}"
    ), wrong.message
    assert (chained.outcome, chained.message) == ("error", "ValueError: no key in the table")
    assert subtests.message == "AssertionError: 0 != 5", subtests.message
    # more-itertools' test_ilen has a docstring: it was named with no message.
    assert cases["test_described"].message == "AssertionError: 12 != 11", done.stderr
    if verbose:
        assert cases["test_plain"].message is None


# --------------------------------------------------------------------------- the contract


def test_report_paths_of_distinct_checks_are_distinct(tmp_path: Path) -> None:
    names = ["a_b", "a:b", "a/b", "..", "pytest"]
    paths = {report_path(tmp_path, check("pytest", name=n), "xml") for n in names}
    assert len(paths) == len(names)
    assert all(p.parent == tmp_path for p in paths)
    assert report_path(tmp_path, check("pytest"), "xml") == tmp_path / "pytest.xml"


def test_unknown_tool_uses_the_generic_reader() -> None:
    parsed = parse_output(check("make", kind=Kind.TEST), result("3 passed, 1 failed"))
    assert parsed.tests is not None and parsed.tests.failed == 1


@pytest.mark.parametrize(
    ("text", "counts"),
    [
        (
            "python3 -munittest\n...\n" + "-" * 70 + "\nRan 99 tests in 2.318s\n\nOK\n",
            (99, 0, 0, 0),
        ),
        ("Ran 5 tests in 0.1s\n\nFAILED (failures=1, errors=2, skipped=1)\n", (1, 1, 2, 1)),
        ("Ran 3 tests in 0.001s\n\nOK (skipped=1, expected failures=1)\n", (2, 0, 0, 1)),
        ("Ran 4 tests in 0.001s\n\nFAILED (unexpected successes=1)\n", (3, 1, 0, 0)),
    ],
)
def test_a_wrapper_that_ran_unittest_is_counted(
    text: str, counts: tuple[int, int, int, int]
) -> None:
    """`make test` whose recipe is `python3 -munittest` (jsonpointer 3.12): its summary is
    unittest's, read by the generic reader."""
    parsed = parse_output(check("make", kind=Kind.TEST), result(stderr=text))
    assert parsed.tests is not None
    t = parsed.tests
    assert (t.passed, t.failed, t.errors, t.skipped) == counts


@pytest.mark.parametrize(
    "tool",
    [
        "mypy",
        "pyright",
        "ruff",
        "tsc",
        "eslint",
        "go",
        "cargo",
        "pytest",
        "jest",
        "node-test",
        "compileall",
        "unittest",
        "npm-test",
    ],
)
@pytest.mark.parametrize(
    "garbage", ["", "{not json", "[1, 2, {}]", '{"generalDiagnostics": 5}', "\x00\xff" * 50]
)
def test_parsers_never_raise_on_garbage(tool: str, garbage: str, tmp_path: Path) -> None:
    parsed = parse_output(check(tool), result(garbage, garbage), tmp_path)
    assert isinstance(parsed, ParsedOutput)


def test_a_parser_that_raises_yields_nothing_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    from assay import parsers

    def broken(*args: object) -> ParsedOutput:
        raise RuntimeError("parser bug")

    monkeypatch.setattr(parsers, "parser_for", lambda tool: broken)
    assert parse_output(check("mypy"), result("anything")) == ParsedOutput()


# --------------------------------------------------------------------------- crashes


def _ran(argv: list[str], cwd: Path) -> ProcessResult:
    """A real program's real output and exit code."""
    done = subprocess.run(argv, check=False, cwd=cwd, capture_output=True, text=True, timeout=60)
    return process_result(
        tuple(argv), cwd=str(cwd), exit_code=done.returncode, stdout=done.stdout, stderr=done.stderr
    )


def _needs(tool: str) -> None:
    # Never a skip: a test that does not run proves nothing, and CI installs these.
    assert shutil.which(tool) is not None, f"{tool} is not installed (.ci/run installs it)"


CRASHES = {
    "python": (
        "t.py",
        'def check(x):\n    return {"a": 1}[x]\n\nprint("running 3 checks")\ncheck("b")\n',
        ["python3", "t.py"],
        "KeyError: 'b'",
    ),
    "node-syntax": (
        "t.js",
        "const a = 1;\nfunction f( {\n  return a;\n}\n",
        ["node", "t.js"],
        "SyntaxError: Unexpected identifier",
    ),
    "node-type": (
        "t.js",
        'const o = undefined;\nfunction t() { return o.x; }\nconsole.log("test 1 ok");\nt();\n',
        ["node", "t.js"],
        "TypeError: Cannot read properties of undefined",
    ),
    "node-coded": (
        "t.js",
        'console.log("test 1 ok");\nrequire("zlib").gzipSync(undefined);\n',
        ["node", "t.js"],
        "TypeError [ERR_INVALID_ARG_TYPE]: The",
    ),
    # Go's compile errors carry no "error:" word (Masterminds/semver's `make test`).
    "go": (
        "t.go",
        "package main\n\nfunc main() {\n\tx := \n}\n",
        ["go", "run", "t.go"],
        "syntax error",
    ),
    "gcc": (
        "t.c",
        '#include <stdio.h>\nint main(void) {\n  int x = 1\n  printf("%d\\n", x);\n}\n',
        ["gcc", "t.c", "-o", "t"],
        "expected",
    ),
}


@pytest.mark.parametrize("case", sorted(CRASHES))
@pytest.mark.parametrize("via_make", [False, True])
def test_a_crash_in_a_test_programs_output_is_a_recognised_failure(
    case: str, via_make: bool, tmp_path: Path
) -> None:
    name, source, argv, message = CRASHES[case]
    _needs(argv[0])
    (tmp_path / name).write_text(source)
    if via_make:
        _needs("make")
        (tmp_path / "Makefile").write_text(f"test:\n\t{' '.join(argv)}\n")
        argv = ["make", "test"]
    ran = _ran(argv, tmp_path)
    assert ran.exit_code not in (0, None)
    tool = "make" if via_make else "shell"
    c = check(tool, tuple(argv), kind=Kind.TEST)
    parsed = parse_output(c, ran)
    ev = classify(c, ran, parsed)
    assert (ev.verdict, ev.cause) == (Verdict.FAIL, Cause.EXIT_NONZERO), ev.note
    assert any(message in d.message for d in parsed.diagnostics), parsed.diagnostics
    if case == "gcc":
        assert (parsed.diagnostics[0].file, parsed.diagnostics[0].line) == ("t.c", 4)
    else:
        assert parsed.diagnostics[0].file == name, parsed.diagnostics


SIGNAL_CRASH_RUNS = {
    "make": ["make", "test"],
    "bash": ["bash", "-c", "make t && ./t && echo done"],
    # dash names the signal alone, with no `sh:` before it
    "sh": ["sh", "-c", "make t && ./t && echo done"],
    # a shell that says nothing of it: its exit status, 128 + SIGSEGV, still does
    "bash, its stderr closed": ["bash", "-c", "make t && exec 2>/dev/null; ./t && echo done"],
}


@pytest.mark.parametrize("runner", SIGNAL_CRASH_RUNS)
def test_a_test_program_a_recipe_ran_that_crashed_on_a_signal_failed(
    runner: str, tmp_path: Path
) -> None:
    """parson's with a wrong count: its test program dereferenced a bad pointer, and make
    said only `make: *** [Makefile:2: test] Segmentation fault`: INDETERMINATE before."""
    argv = SIGNAL_CRASH_RUNS[runner]
    _needs("gcc")
    _needs(argv[0])
    (tmp_path / "t.c").write_text(
        '#include <stdio.h>\nint main(void) {\n  int *p = 0;\n  puts("test 1 ok");\n'
        "  return *p;\n}\n"
    )
    (tmp_path / "Makefile").write_text("test: t\n\t./t\nt: t.c\n\tgcc -o t t.c\n")
    ran = _ran(argv, tmp_path)
    assert ran.exit_code not in (0, None) and ran.signal is None
    c = check(argv[0], tuple(argv), kind=Kind.TEST)
    ev = classify(c, ran, parse_output(c, ran))
    assert (ev.verdict, ev.cause) == (Verdict.FAIL, Cause.EXIT_NONZERO), ev.note
    assert any("crashed: Segmentation fault" in d.message for d in ev.diagnostics), ev


SANITIZED_BUGS = {
    "address": (
        "int main(void) {\n  volatile int a[2] = {0, 0};\n  return a[2];\n}\n",
        "AddressSanitizer: stack-buffer-overflow",
        3,
    ),
    "thread": (
        (
            "#include <pthread.h>\nint n;\nvoid *f(void *a) { n++; return 0; }\n"
            "int main(void) {\n  pthread_t t;\n  pthread_create(&t, 0, f, 0);\n  n++;\n"
            "  pthread_join(t, 0);\n  return 0;\n}\n"
        ),
        "ThreadSanitizer: data race",
        None,  # either access may be reported first
    ),
    "undefined": (
        "int main(int c, char **v) {\n  int x = 2147483647;\n  x += c;\n  return x == 0;\n}\n",
        "runtime error: signed integer overflow",
        3,
    ),
}


@pytest.mark.parametrize("sanitizer", SANITIZED_BUGS)
def test_a_bug_a_sanitizer_caught_is_a_failure_at_its_place(sanitizer: str, tmp_path: Path) -> None:
    """A C test built with `-fsanitize=...` that a recipe ran: the sanitizer's report is
    why it failed (`make test` exited 2 "and its output does not say why" before)."""
    _needs("gcc")
    _needs("make")
    code, said, line = SANITIZED_BUGS[sanitizer]
    (tmp_path / "t.c").write_text(code)
    (tmp_path / "Makefile").write_text(
        f"test:\n\tgcc -g -fsanitize={sanitizer} -fno-sanitize-recover=all -o t t.c\n\t./t\n"
    )
    ran = _ran(["make", "test"], tmp_path)
    c = check("make", ("make", "test"), kind=Kind.TEST)
    ev = classify(c, ran, parse_output(c, ran))
    assert (ev.verdict, ev.cause) == (Verdict.FAIL, Cause.EXIT_NONZERO), (ev.note, ran.stderr)
    found = ev.diagnostics[0]
    assert found.message.startswith(said), found
    assert found.file == "t.c", found
    if line is not None:
        assert found.line == line, found


def test_a_sanitizer_that_could_not_start_is_no_bug_of_the_code() -> None:
    from assay.parsers.crash import crash_diagnostics

    text = (
        "==6770==ERROR: ThreadSanitizer failed to allocate 0x1c000000000 (1924145348608)"
        " bytes at address 200000000000 (errno: 12)\n"
        "==6682==ReserveShadowMemoryRange failed while trying to map 0xdfff0001000 bytes."
        " Perhaps you're using ulimit -v\n"
    )
    assert crash_diagnostics(text, "/src") == ()


def test_an_es_modules_syntax_error_is_named_at_its_file_in_the_tree(tmp_path: Path) -> None:
    """node names an ES module by its URL (`file:///.../lib.mjs:2`), and uvu's `-r esm`
    prints the error inside brackets (`[file:///...index.mjs:47` ... `token]`, kleur's):
    both were kept whole, an absolute URL no reader could match to the tree."""
    from assay.parsers.crash import crash_diagnostics

    _needs("node")
    write(
        tmp_path,
        {
            "lib.mjs": "export const a = 1;\nfunction f(arr str) {}\n",
            "t.js": 'import("./lib.mjs");\n',
        },
    )
    ran = _ran(["node", "t.js"], tmp_path)
    assert ran.exit_code == 1
    (found,) = crash_diagnostics(ran.stderr.text, str(tmp_path))
    assert (found.file, found.line) == ("lib.mjs", 2), found
    assert found.message.startswith("SyntaxError: Unexpected identifier"), found
    bracketed = (
        "node:internal/process/promises:391\n    triggerUncaughtException(err, true);\n    ^\n\n"
        f"[file://{tmp_path}/index.mjs:47\nfunction run(arr str) {{\n                 ^\n\n"
        "SyntaxError: Invalid or unexpected token]\n\nNode.js v20.20.2\n"
    )
    (found,) = crash_diagnostics(bracketed, str(tmp_path))
    assert (found.file, found.line, found.message) == (
        "index.mjs",
        47,
        "SyntaxError: Invalid or unexpected token",
    )


def test_a_syntax_error_mocha_met_loading_a_test_is_named_at_its_own_file(
    tmp_path: Path,
) -> None:
    """mocha prints node's header after words of its own (`Exception during run:
    /path/index.js:2`): the place was the test file's `require` (jshttp/mime-types)."""
    from assay.parsers.crash import crash_diagnostics

    _needs("mocha")
    write(
        tmp_path,
        {
            "index.js": "exports.a = 1\nfunction ((f (x) {}\n",
            "test/test.js": "const lib = require('../index.js')\nit('a', () => {})\n",
        },
    )
    ran = _ran(["mocha", "test/test.js"], tmp_path)
    assert ran.exit_code not in (0, None)
    assert "Exception during run: " in ran.stderr.text
    (found,) = crash_diagnostics(ran.stderr.text, str(tmp_path))
    assert (found.file, found.line) == ("index.js", 2), found
    assert found.message.startswith("SyntaxError:"), found


def test_a_traceback_in_a_passing_run_changes_nothing(tmp_path: Path) -> None:
    # A suite that prints a caught traceback and exits 0 is judged by its exit code and counts.
    (tmp_path / "t.py").write_text(
        "import traceback\ntry:\n    1/0\nexcept ZeroDivisionError:\n    traceback.print_exc()\n"
        'print("1 passed, 0 failed")\n'
    )
    ran = _ran(["python3", "t.py"], tmp_path)
    c = check("shell", ("python3", "t.py"), kind=Kind.TEST)
    ev = classify(c, ran, parse_output(c, ran))
    assert ev.verdict is Verdict.PASS


@pytest.mark.parametrize("through_shell", [False, True])
def test_a_make_recipe_whose_command_is_not_found_is_a_missing_tool(
    through_shell: bool, tmp_path: Path
) -> None:
    _needs("make")
    # make runs a plain recipe line itself ("make: x: No such file or directory") and one
    # with shell syntax through /bin/sh ("/bin/sh: 1: x: not found"); both end "Error 127".
    line = "nosuchlinter --check src" + (" && echo ok" if through_shell else "")
    (tmp_path / "Makefile").write_text(f"lint:\n\t{line}\n")
    ran = _ran(["make", "lint"], tmp_path)
    assert ran.exit_code == 2
    c = check("make", ("make", "lint"), kind=Kind.LINT)
    ev = classify(c, ran, parse_output(c, ran))
    assert (ev.verdict, ev.cause) == (Verdict.UNVERIFIED, Cause.TOOLCHAIN_MISSING), ev.note
    assert "nosuchlinter" in ev.note


def test_a_recipe_that_fails_on_its_own_is_still_a_failure(tmp_path: Path) -> None:
    _needs("make")
    (tmp_path / "Makefile").write_text("lint:\n\tfalse\n")
    ran = _ran(["make", "lint"], tmp_path)
    c = check("make", ("make", "lint"), kind=Kind.LINT)
    ev = classify(c, ran, parse_output(c, ran))
    assert (ev.verdict, ev.cause) == (Verdict.FAIL, Cause.EXIT_NONZERO)


def test_a_summary_on_stdout_is_read_past_a_long_failure_listing_on_stderr() -> None:
    # vitest through `npm test` (jshttp/cookie with a wrong value): the summary closes stdout,
    # while 58 failures' details fill stderr, which `combined` puts after it.
    details = "".join(
        f" FAIL  src/serialize.spec.ts > case {i}\nAssertionError: expected 'a' to equal 'b'\n\n"
        for i in range(120)
    )
    result = process_result(
        ("npm", "run", "test"),
        exit_code=1,
        stdout=" Test Files  1 failed | 1 passed (2)\n      Tests  58 failed | 43 passed (101)\n",
        stderr=details,
    )
    check = Check(name="npm-test", kind=Kind.TEST, argv=result.argv, tool="npm-test")
    evidence = classify(check, result, parse_output(check, result))
    assert evidence.verdict is Verdict.FAIL and evidence.cause is Cause.EXIT_NONZERO
    assert evidence.tests is not None
    assert (evidence.tests.passed, evidence.tests.failed) == (43, 58)


# ava's own deadline (10 s without output), as p-limit's `xo && ava && tsd` printed it when a
# test hung: the run exits 1, and that is a hang, as assay's deadline is, not a failure.
AVA_TIMED_OUT = """\
> p-limit@7.3.1 test
> xo && ava && tsd


  - [skip] clearQueue rejects pending promises when enabled

  \u2718 Timed out while running tests

  21 tests were pending in test.js

  \u25cc concurrency: 1
  \u25cc concurrency: 4
  \u25cc map

  \u2500

  1 test skipped
  21 tests remained pending after a timeout
"""


def test_ava_stopping_a_hanging_test_at_its_own_deadline_is_a_timeout() -> None:
    c = check("npm-test", ("npm", "run", "test"), kind=Kind.TEST)
    run = result(AVA_TIMED_OUT, exit_code=1)
    parsed = parse_output(c, run, None)
    assert parsed.hung_tests == ("concurrency: 1", "concurrency: 4", "map"), parsed
    evidence = classify(c, run, parsed)
    assert (evidence.verdict, evidence.cause) == (Verdict.INCONCLUSIVE, Cause.TIMEOUT)


def test_ava_timing_out_with_no_summary_line_is_a_timeout_not_one_failed_test() -> None:
    """yocto-queue's hang: ava prints no count at all, so its lines are read one by one,
    and the `\u2716 Timed out` line read as one failed test."""
    text = (
        "\n  \u2716 Timed out while running tests\n\n  7 tests were pending in test.js\n\n"
        "  \u25cc .enqueue()\n  \u25cc .dequeue()\n  \u25cc .drain()\n\n  \u2500\n"
    )
    c = check("npm-test", ("npm", "test"), kind=Kind.TEST)
    run = result(text, exit_code=1)
    parsed = parse_output(c, run, None)
    assert parsed.hung_tests == (".enqueue()", ".dequeue()", ".drain()"), parsed
    assert parsed.tests is None or not parsed.tests.any_failed, parsed.tests
    evidence = classify(c, run, parsed)
    assert (evidence.verdict, evidence.cause) == (Verdict.INCONCLUSIVE, Cause.TIMEOUT)


def test_an_ava_failure_beside_its_timeout_stays_a_failure() -> None:
    c = check("npm-test", ("npm", "run", "test"), kind=Kind.TEST)
    text = AVA_TIMED_OUT.replace("  1 test skipped\n", "  1 test failed\n  1 test skipped\n")
    run = result(text, exit_code=1)
    evidence = classify(c, run, parse_output(c, run, None))
    assert (evidence.verdict, evidence.cause) == (Verdict.FAIL, Cause.EXIT_NONZERO)


# slugify 2.2.1's `xo && ava && tsd` when tsd fails: ava's marks, then tsd's findings,
# each marked as a failed test is.
AVA_THEN_TSD = (
    "> @sindresorhus/slugify@2.2.1 test\n> xo && ava && tsd\n\n"
    + "".join(f"  \u2714 case {n}\n" for n in range(20))
    + "  \u2500\n\n  20 tests passed\n",
    "".join(f"  \u2716   {line}:8    Cannot find name Http1Request.\n" for line in range(300))
    + "\n  \u2716 300 problems\n",
)


def test_a_linters_marked_findings_are_no_failed_tests() -> None:
    c = check("npm-test", ("npm", "run", "test"), kind=Kind.TEST)
    parsed = parse_output(c, result(*AVA_THEN_TSD, exit_code=1), None)
    assert parsed.tests is not None and parsed.tests.failed == 0, parsed.tests


@pytest.mark.parametrize(
    "text",
    [
        # sindresorhus/is 8.0.0: `npm test` runs tsc, xo, then node's test runner; xo
        # failed with `  2 errors`, read as 2 of 2 tests failed.
        "  \u2716   824:65  This assertion is unnecessary.\n\n  7 warnings\n  2 errors\n",
        # fastq 1.20.3 and json-schema-traverse 1.0.0: ESLint's closing lines inside
        # `npm test`, read as 1 of 1 tests failed.
        (
            "index.js\n  3:14  error  Parsing error: Unexpected token ;\n\n"
            "\u2716 1 problem (1 error, 0 warnings)\n"
        ),
        (
            "a.js\n  1:1  error  x  semi\n\n\u2716 3 problems (2 errors, 1 warning)\n"
            "  2 errors and 0 warnings potentially fixable with the `--fix` option.\n"
        ),
    ],
)
def test_a_linters_total_is_no_count_of_tests(text: str) -> None:
    c = check("npm-test", ("npm", "run", "test"), kind=Kind.TEST)
    parsed = parse_output(c, result(text, exit_code=1), None)
    assert parsed.tests is None, parsed.tests
    # The linter's errors are why the wrapper failed: FAILED, not unexplained.
    evidence = classify(c, result(text, exit_code=1), parsed)
    assert (evidence.verdict, evidence.cause) == (Verdict.FAIL, Cause.EXIT_NONZERO)
    # pytest's own summary still counts.
    parsed = parse_output(c, result("==== 1 passed, 2 errors in 0.51s ====\n"), None)
    assert parsed.tests is not None and parsed.tests.errors == 2


# debug 4.4's `npm test`: mocha's tests pass, then karma finds no browser.
KARMA_WITHOUT_CHROME = """\
  20 passing (25ms)

02 12 2026 11:30:00.000:INFO [karma-server]: Karma v6.4.4 server started at http://localhost:9876/
02 12 2026 11:30:00.001:INFO [launcher]: Launching browsers ChromeHeadless with concurrency unlimited
02 12 2026 11:30:00.002:ERROR [launcher]: No binary for ChromeHeadless browser on your platform.
  Please, set "CHROME_BIN" env variable.
"""


def test_a_browser_the_test_runner_cannot_find_is_a_missing_tool() -> None:
    c = check("npm-test", ("npm", "run", "test"), kind=Kind.TEST)
    run = result(KARMA_WITHOUT_CHROME, exit_code=1)
    evidence = classify(c, run, parse_output(c, run, None))
    assert (evidence.verdict, evidence.cause) == (Verdict.UNVERIFIED, Cause.TOOLCHAIN_MISSING)
    assert "a ChromeHeadless browser" in evidence.note, evidence.note
    # A test that really failed beside it stays a failure.
    run = result(KARMA_WITHOUT_CHROME.replace("20 passing (25ms)", "19 passing\n  1 failing"))
    evidence = classify(c, run, parse_output(c, run, None))
    assert evidence.verdict is Verdict.FAIL


def test_json_nested_past_the_interpreters_depth_is_skipped_not_raised() -> None:
    """Output is the project's to write: one JSON line nested 100,000 deep is no event,
    and the events around it are still read (the whole stream was lost to it before)."""
    deep = '{"Action":' * 100_000 + "1" + "}" * 100_000
    text = f'{{"Action":"fail"}}\n{deep}\n{{"Action":"pass"}}\n'
    assert list(json_lines(text)) == [{"Action": "fail"}, {"Action": "pass"}]
    assert json_document(f"noise [{deep}]") is None
