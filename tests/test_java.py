"""Java: Maven and Gradle discovered, instrumented and read; Maven run for real, offline,
through `assay verify --sandbox bwrap` (Debian's maven, libsurefire-java,
libmaven-compiler-plugin-java, libmaven-resources-plugin-java and junit4: a machine without
them fails these tests, it does not skip them).

Gradle: Debian's gradle (4.4) does not run on the only JDK Debian ships (17), so Gradle's
discovery and report reading are tested on reports in the form Gradle writes, not on a
real Gradle run.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from assay.discovery.command_lines import recognise_line
from assay.evidence import DEFAULT_TIMEOUT_S, Check, CheckerId
from assay.instrument import instrument
from assay.parsers import parse_output
from assay.plan import PlanOptions, plan_repository
from assay.process import ProcessResult
from assay.tools.java import DEBIAN_MAVEN_REPO, MAVEN_REPO_VAR, report_suffix
from assay.verdict import Kind
from tests.cli import ASSAY, path_with_venv
from tests.repos import write_dedented
from tests.results import process_result


def argvs(root: Path) -> dict[str, tuple[str, ...]]:
    return {c.name: c.argv for c in plan_repository(root).checks}


# --------------------------------------------------------------------------- discovery


def test_a_pom_plans_maven_test_and_the_build_it_covers(tmp_path: Path) -> None:
    write_dedented(tmp_path, {"pom.xml": "<project/>"})
    found = plan_repository(tmp_path)
    assert argvs(tmp_path) == {"maven-test": ("mvn", "test")}
    assert {c.tool for c in found.checks} == {"maven"}
    assert any("mvn -q compile" in d.what and "covered by" in d.reason for d in found.dropped)
    only_build = plan_repository(tmp_path, PlanOptions(kinds=frozenset({Kind.BUILD})))
    assert [c.argv for c in only_build.checks] == [("mvn", "-q", "compile")]


def test_the_maven_wrapper_is_used_when_the_project_has_one(tmp_path: Path) -> None:
    write_dedented(tmp_path, {"pom.xml": "<project/>", "mvnw": "#!/bin/sh\n"})
    assert argvs(tmp_path) == {"maven-test": ("./mvnw", "test")}


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"build.gradle": ""}, ("gradle", "-q", "test")),
        ({"build.gradle.kts": ""}, ("gradle", "-q", "test")),
        ({"settings.gradle": ""}, ("gradle", "-q", "test")),
        ({"build.gradle.kts": "", "gradlew": "#!/bin/sh\n"}, ("./gradlew", "-q", "test")),
    ],
)
def test_gradle_builds_plan_gradle_test(
    tmp_path: Path, files: dict[str, str], expected: tuple[str, ...]
) -> None:
    write_dedented(tmp_path, files)
    assert argvs(tmp_path) == {"gradle-test": expected}


def test_only_a_runner_that_prints_as_tests_pass_is_stopped_for_going_quiet(
    tmp_path: Path,
) -> None:
    """Surefire prints a line as each test class starts and ends; Gradle's test task prints
    nothing until it is done, and a long suite's silence is not a hang's."""
    write_dedented(tmp_path / "maven", {"pom.xml": "<project/>"})
    write_dedented(tmp_path / "gradle", {"build.gradle": ""})
    (maven,) = plan_repository(tmp_path / "maven").checks
    (gradle,) = plan_repository(tmp_path / "gradle").checks
    assert maven.no_output_timeout_s == DEFAULT_TIMEOUT_S
    assert gradle.no_output_timeout_s is None


@pytest.mark.parametrize(
    ("line", "kind", "name"),
    [
        ("mvn -B verify", Kind.TEST, "maven-test"),
        ("./mvnw -q clean install", Kind.TEST, "maven-test"),
        ("mvn -DskipTests package", Kind.BUILD, "maven-build"),
        ("./gradlew test --info", Kind.TEST, "gradle-test"),
        ("gradle :app:compileJava", Kind.BUILD, "gradle-build"),
    ],
)
def test_maven_and_gradle_command_lines_are_recognised(line: str, kind: Kind, name: str) -> None:
    (hit,) = recognise_line(line)
    assert (hit.kind, hit.name, hit.tool in ("maven", "gradle")) == (kind, name, True)


def test_mvn_without_a_phase_is_no_check() -> None:
    assert recognise_line("mvn dependency:tree") == []


# --------------------------------------------------------------------------- instrumenting

MAVEN_TEST = Check("maven-test", Kind.TEST, ("mvn", "-q", "test"), tool="maven")
MAVEN = CheckerId("maven", "3.8.7", "/usr/bin/mvn")


def test_maven_runs_offline_against_a_configured_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MAVEN_REPO_VAR, "/srv/m2")
    argv = instrument(MAVEN_TEST, MAVEN, tmp_path).argv
    # Not quiet: Surefire's line as each test class starts and ends is the run's progress.
    assert argv[0] == "mvn" and argv[-1] == "test" and "-q" not in argv
    assert {"-B", "-o", "-Dmaven.repo.local=/srv/m2"} <= set(argv)
    suffix = report_suffix(tmp_path, MAVEN_TEST)
    assert f"-Dsurefire.reportNameSuffix={suffix}" in argv


def test_maven_uses_debian_s_repository_by_default_and_nothing_when_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(MAVEN_REPO_VAR, raising=False)
    argv = instrument(MAVEN_TEST, MAVEN, tmp_path).argv
    if os.path.isdir(DEBIAN_MAVEN_REPO):
        assert f"-Dmaven.repo.local={DEBIAN_MAVEN_REPO}" in argv and "-o" in argv
    monkeypatch.setenv(MAVEN_REPO_VAR, "")
    argv = instrument(MAVEN_TEST, MAVEN, tmp_path).argv
    assert "-o" not in argv and not any(a.startswith("-Dmaven.repo.local") for a in argv)


def test_a_command_s_own_repository_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MAVEN_REPO_VAR, "/srv/m2")
    own = Check("m", Kind.TEST, ("mvn", "-Dmaven.repo.local=/mine", "test"), tool="maven")
    argv = instrument(own, MAVEN, tmp_path).argv
    assert [a for a in argv if "repo.local" in a] == ["-Dmaven.repo.local=/mine"]


def test_report_suffixes_differ_between_runs(tmp_path: Path) -> None:
    assert report_suffix(tmp_path / "a", MAVEN_TEST) != report_suffix(tmp_path / "b", MAVEN_TEST)


# --------------------------------------------------------------------------- reading

# What Surefire 2.22 wrote for a failing JUnit 4 test, run with a report name suffix.
SUREFIRE_FAILING = """\
<?xml version="1.0" encoding="UTF-8"?>
<testsuite xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="https://maven.apache.org/surefire/maven-surefire-plugin/xsd/surefire-test-report.xsd" name="tiny.AddTest({suffix})" time="0.333" tests="2" errors="0" skipped="0" failures="1">
  <properties>
    <property name="java.specification.version" value="17"/>
  </properties>
  <testcase name="adds" classname="tiny.AddTest({suffix})" time="0.002"/>
  <testcase name="wrong" classname="tiny.AddTest({suffix})" time="0.024">
    <failure message="expected:&lt;4&gt; but was:&lt;3&gt;" type="java.lang.AssertionError"><![CDATA[java.lang.AssertionError: expected:<4> but was:<3>
	at tiny.AddTest.wrong(AddTest.java:14)
]]></failure>
  </testcase>
</testsuite>
"""
SUREFIRE_PRINTED = """\
[ERROR] Tests run: 2, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.333 s <<< FAILURE! - in tiny.AddTest
[ERROR] wrong(tiny.AddTest)  Time elapsed: 0.024 s  <<< FAILURE!
java.lang.AssertionError: expected:<4> but was:<3>
[ERROR] Tests run: 2, Failures: 1, Errors: 0, Skipped: 0
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:2.22.3:test (default-test) on project tiny: There are test failures.
"""
# What Gradle 8 writes to build/test-results/test/ for the same suite.
GRADLE_FAILING = """\
<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="tiny.AddTest" tests="2" skipped="0" failures="1" errors="0" timestamp="2024-05-02T10:11:12" hostname="build" time="0.031">
  <properties/>
  <testcase name="adds" classname="tiny.AddTest" time="0.002"/>
  <testcase name="wrong" classname="tiny.AddTest" time="0.009">
    <failure message="java.lang.AssertionError: expected:&lt;4&gt; but was:&lt;3&gt;" type="java.lang.AssertionError">java.lang.AssertionError: expected:&lt;4&gt; but was:&lt;3&gt;
	at tiny.AddTest.wrong(AddTest.java:14)
</failure>
  </testcase>
  <system-out><![CDATA[]]></system-out>
  <system-err><![CDATA[]]></system-err>
</testsuite>
"""
GRADLE_PRINTED = """\
AddTest > wrong FAILED
    java.lang.AssertionError at AddTest.java:14

2 tests completed, 1 failed

FAILURE: Build failed with an exception.
"""
MAVEN_JAVAC = """\
[ERROR] COMPILATION ERROR : 
[ERROR] {root}/src/main/java/tiny/Add.java:[5,21] ';' expected
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.10.1:compile (default-compile) on project tiny: Compilation failure
[ERROR] {root}/src/main/java/tiny/Add.java:[5,21] ';' expected
"""
GRADLE_JAVAC = """\
> Task :compileJava FAILED
{root}/src/main/java/tiny/Add.java:5: error: ';' expected
        return a + b
                    ^
1 error
"""


def ran(root: Path, stdout: str, exit_code: int, argv: tuple[str, ...]) -> ProcessResult:
    return process_result(argv, cwd=str(root), exit_code=exit_code, duration_s=1.0, stdout=stdout)


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    directory = tmp_path / "reports"
    directory.mkdir()
    return directory


def surefire(root: Path, name: str, text: str) -> Path:
    path = root / "target" / "surefire-reports" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_surefire_reports_give_counts_and_cases(tmp_path: Path, reports: Path) -> None:
    suffix = report_suffix(reports, MAVEN_TEST)
    surefire(tmp_path, f"TEST-tiny.AddTest-{suffix}.xml", SUREFIRE_FAILING.format(suffix=suffix))
    parsed = parse_output(MAVEN_TEST, ran(tmp_path, SUREFIRE_PRINTED, 1, MAVEN_TEST.argv), reports)
    assert parsed.report_found and parsed.failure_recognized
    assert parsed.tests is not None
    assert (parsed.tests.passed, parsed.tests.failed, parsed.tests.source) == (1, 1, "junit")
    assert [(c.name, c.outcome) for c in parsed.test_cases] == [
        ("tiny.AddTest::adds", "passed"),
        ("tiny.AddTest::wrong", "failed"),
    ]


THROWN_IN_MAIN = """\
java.lang.ArithmeticException: / by zero
\tat java.base/java.lang.Math.floorDiv(Math.java:1)
\tat tiny.Add.div(Add.java:9)
\tat tiny.AddTest.wrong(AddTest.java:14)
\tat java.base/jdk.internal.reflect.NativeMethodAccessorImpl.invoke0(Native Method)
"""


@pytest.mark.parametrize(
    ("trace", "sources", "place"),
    [
        ("", ["src/test/java/tiny/AddTest.java"], ("src/test/java/tiny/AddTest.java", 14)),
        (THROWN_IN_MAIN, ["src/main/java/tiny/Add.java"], ("src/main/java/tiny/Add.java", 9)),
        # A frame whose file is in no source root, or a name that is no Java file's, is left out.
        ("", ["lib/tiny/AddTest.java"], None),
        (
            "\tat tiny.Add.x(../../../etc/passwd.java:1)\n",
            ["src/test/java/tiny/AddTest.java"],
            ("src/test/java/tiny/AddTest.java", 14),
        ),
    ],
    ids=["assertion", "thrown-in-main", "no-source-root", "no-path-climbs"],
)
def test_a_failed_test_is_placed_at_its_innermost_frame_of_the_project(
    tmp_path: Path, reports: Path, trace: str, sources: list[str], place: tuple[str, int] | None
) -> None:
    suffix = report_suffix(reports, MAVEN_TEST)
    report = SUREFIRE_FAILING.replace("java.lang.AssertionError: expected", trace + "expected")
    surefire(tmp_path, f"TEST-tiny.AddTest-{suffix}.xml", report.format(suffix=suffix))
    for source in sources:
        (tmp_path / source).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / source).write_text("class X {}\n")
    parsed = parse_output(MAVEN_TEST, ran(tmp_path, SUREFIRE_PRINTED, 1, MAVEN_TEST.argv), reports)
    placed = [(d.file, d.line) for d in parsed.diagnostics]
    assert placed == ([place] if place else []), parsed.diagnostics
    assert all(d.message.startswith("AddTest.wrong: ") for d in parsed.diagnostics)


def test_reports_already_in_the_tree_are_not_this_run_s(tmp_path: Path, reports: Path) -> None:
    suffix = report_suffix(reports, MAVEN_TEST)
    passing = SUREFIRE_FAILING.replace("<failure", "<skipped").replace("</failure>", "</skipped>")
    # One without this run's suffix, one with it but older than the run: neither counts.
    surefire(tmp_path, "TEST-tiny.AddTest.xml", passing.format(suffix=""))
    old = surefire(tmp_path, f"TEST-tiny.OldTest-{suffix}.xml", passing.format(suffix=suffix))
    os.utime(old, (1_000_000_000, 1_000_000_000))
    parsed = parse_output(MAVEN_TEST, ran(tmp_path, "", 0, MAVEN_TEST.argv), reports)
    assert parsed.tests is None and not parsed.report_found


def test_a_report_directory_reached_through_a_link_is_refused(
    tmp_path: Path, reports: Path
) -> None:
    suffix = report_suffix(reports, MAVEN_TEST)
    elsewhere = tmp_path / "elsewhere"
    surefire(elsewhere, f"TEST-a-{suffix}.xml", SUREFIRE_FAILING.format(suffix=suffix))
    project = tmp_path / "project"
    project.mkdir()
    (project / "target").symlink_to(elsewhere / "target", target_is_directory=True)
    parsed = parse_output(MAVEN_TEST, ran(project, "", 0, MAVEN_TEST.argv), reports)
    assert parsed.tests is None and parsed.report_refused and "link" in parsed.report_refused


def test_the_printed_summary_can_only_add_failures(tmp_path: Path, reports: Path) -> None:
    suffix = report_suffix(reports, MAVEN_TEST)
    rewritten = SUREFIRE_FAILING.replace("<failure", "<skipped").replace("</failure>", "</skipped>")
    surefire(tmp_path, f"TEST-tiny.AddTest-{suffix}.xml", rewritten.format(suffix=suffix))
    parsed = parse_output(MAVEN_TEST, ran(tmp_path, SUREFIRE_PRINTED, 0, MAVEN_TEST.argv), reports)
    assert parsed.tests is not None and parsed.tests.failed == 1


def test_gradle_reports_are_read(tmp_path: Path, reports: Path) -> None:
    check = Check("gradle-test", Kind.TEST, ("gradle", "-q", "test"), tool="gradle")
    results = tmp_path / "build" / "test-results" / "test"
    results.mkdir(parents=True)
    (results / "TEST-tiny.AddTest.xml").write_text(GRADLE_FAILING)
    (results / "binary").mkdir()
    parsed = parse_output(check, ran(tmp_path, GRADLE_PRINTED, 1, check.argv), reports)
    assert parsed.tests is not None and (parsed.tests.passed, parsed.tests.failed) == (1, 1)
    assert parsed.failure_recognized


@pytest.mark.parametrize(
    ("printed", "column"), [(MAVEN_JAVAC, 21), (GRADLE_JAVAC, None)], ids=["maven", "gradle"]
)
def test_javac_diagnostics_are_located(
    tmp_path: Path, reports: Path, printed: str, column: int | None
) -> None:
    result = ran(tmp_path, printed.format(root=tmp_path), 1, MAVEN_TEST.argv)
    parsed = parse_output(MAVEN_TEST, result, reports)
    assert [(d.file, d.line, d.column, d.message) for d in parsed.diagnostics] == [
        ("src/main/java/tiny/Add.java", 5, column, "';' expected")
    ]
    assert parsed.failure_recognized


# --------------------------------------------------------------------------- real Maven

POM = """\
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>tiny</artifactId>
  <version>0.1</version>
  <properties>
    <maven.compiler.source>17</maven.compiler.source>
    <maven.compiler.target>17</maven.compiler.target>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency>
      <groupId>junit</groupId>
      <artifactId>junit</artifactId>
      <version>4.x</version>
      <scope>test</scope>
    </dependency>
  </dependencies>
</project>
"""
ADD = """\
package tiny;

public class Add {
    public static int add(int a, int b) {
        return a + b;
    }
}
"""
ADD_TEST = """\
package tiny;

import static org.junit.Assert.assertEquals;
import org.junit.Test;

public class AddTest {
    @Test
    public void adds() {
        assertEquals(3, Add.add(1, 2));
    }
%s}
"""
WRONG = """
    @Test
    public void wrong() {
        assertEquals(4, Add.add(1, 2));
    }
"""
HANGS = """
    @Test
    public void hangs() throws Exception {
        Thread.sleep(600_000);
    }
"""


def maven_project(root: Path, *, add: str = ADD, more_tests: str = "") -> Path:
    return write_dedented(
        root,
        {
            "pom.xml": POM,
            "src/main/java/tiny/Add.java": add,
            "src/test/java/tiny/AddTest.java": ADD_TEST % more_tests,
        },
    )


def verify(repo: Path, tmp_path: Path, *args: str) -> tuple[int, dict[str, object]]:
    env = {
        "PATH": path_with_venv(),
        "HOME": str(tmp_path / "home"),
        "ASSAY_CACHE_DIR": str(tmp_path / "cache"),
        "LANG": "C.UTF-8",
    }
    done = subprocess.run(
        [ASSAY, "verify", str(repo), "--sandbox", "bwrap", "--json", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def check_named(report: dict[str, object], name: str) -> dict[str, object]:
    checks = report["checks"]
    assert isinstance(checks, list)
    return next(c for c in checks if c["name"] == name)


@pytest.mark.slow
def test_real_maven_pristine_project_is_verified(tmp_path: Path) -> None:
    code, report = verify(maven_project(tmp_path / "repo"), tmp_path)
    test = check_named(report, "maven-test")
    assert (report["status"], code) == ("VERIFIED", 0), test
    assert test["tests"]["passed"] == 1  # type: ignore[index]
    assert test["checker"]["tool"] == "maven"  # type: ignore[index]


@pytest.mark.slow
def test_real_maven_compile_error_fails_with_the_javac_diagnostic(tmp_path: Path) -> None:
    broken = ADD.replace("return a + b;", "return a + b")
    code, report = verify(maven_project(tmp_path / "repo", add=broken), tmp_path)
    test = check_named(report, "maven-test")
    assert (report["status"], code) == ("FAILED", 1), test
    assert (test["verdict"], test["cause"]) == ("fail", "exit_nonzero")
    where = [(d["file"], d["line"]) for d in test["diagnostics"]]  # type: ignore[union-attr]
    assert ("src/main/java/tiny/Add.java", 5) in where, test["diagnostics"]


@pytest.mark.slow
def test_real_maven_failing_test_fails_with_surefire_counts(tmp_path: Path) -> None:
    code, report = verify(maven_project(tmp_path / "repo", more_tests=WRONG), tmp_path)
    test = check_named(report, "maven-test")
    assert (report["status"], code) == ("FAILED", 1), test
    counts = test["tests"]
    assert (counts["passed"], counts["failed"], counts["source"]) == (1, 1, "junit")  # type: ignore[index]
    # The assertion's line in the test's source, relative to the project, and the test named.
    (diagnostic,) = test["diagnostics"]  # type: ignore[misc]
    assert (diagnostic["file"], diagnostic["line"]) == ("src/test/java/tiny/AddTest.java", 14)
    assert diagnostic["message"] == "AddTest.wrong: expected:<4> but was:<3>"
    assert "AddTest.java:14: AddTest.wrong" in str(report["note"])


#: A test class that takes `SLOW_CLASS_S` to pass, without a word: three of them.
SLOW_CLASS = """\
package tiny;

import org.junit.Test;

public class Slow%dTest {
    @Test
    public void takes_its_time() throws Exception {
        Thread.sleep(%d);
    }
}
"""
SLOW_CLASS_S = 6


@pytest.mark.slow
def test_real_maven_suite_longer_than_the_no_output_limit_is_verified(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`mvn -q test` printed nothing until the run ended: a suite longer than the no-output
    limit (here shrunk to 15 s; three classes of 6 s) was stopped as hung."""
    from assay import plan as planning
    from assay.pipeline import VerifyOptions
    from assay.pipeline import verify as verify_in_process

    monkeypatch.setenv("PATH", path_with_venv())
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(planning, "DEFAULT_TIMEOUT_S", 15.0)
    repo = maven_project(tmp_path / "repo")
    for n in range(3):
        (repo / f"src/test/java/tiny/Slow{n}Test.java").write_text(
            SLOW_CLASS % (n, SLOW_CLASS_S * 1000)
        )
    options = VerifyOptions(sandbox="bwrap", use_cache=False, cache_dir=str(tmp_path / "cache"))
    report = verify_in_process(repo, options)
    assert report.status.value == "VERIFIED", report.note
    (test,) = [e for e in report.checks if e.check.name == "maven-test"]
    assert test.tests is not None and test.tests.passed == 4, test.tests


@pytest.mark.slow
def test_real_maven_hanging_test_is_indeterminate(tmp_path: Path) -> None:
    repo = maven_project(tmp_path / "repo", more_tests=HANGS)
    code, report = verify(repo, tmp_path, "--timeout", "45")
    test = check_named(report, "maven-test")
    assert (report["status"], code) == ("INDETERMINATE", 3), test
    assert (test["verdict"], test["cause"]) == ("inconclusive", "timeout")
    # Stopped in the tests' JVM, not in a build still compiling when the deadline came.
    assert "surefirebooter" in str(test), test
    # The JVM's thread dump, asked for at the deadline and kept by Surefire, names the test
    # and its line (Surefire's own lines name its class only).
    assert "while running tiny.AddTest.hangs (stuck at src/test/java/tiny/AddTest.java:" in str(
        report["note"]
    ), report["note"]


#: A plugin version and a dependency version Debian's repository does not carry.
_ABSENT_PLUGIN = """\
  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-compiler-plugin</artifactId>
        <version>3.0.0-absent</version>
      </plugin>
    </plugins>
  </build>
</project>
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("pom", "artifact"),
    [
        (POM.replace("</project>\n", _ABSENT_PLUGIN), "maven-compiler-plugin:jar:3.0.0-absent"),
        (POM.replace("<version>4.x</version>", "<version>4.0-absent</version>"), "4.0-absent"),
    ],
    ids=["plugin", "dependency"],
)
def test_an_artifact_not_in_the_offline_repository_is_unverified_naming_it(
    tmp_path: Path, pom: str, artifact: str
) -> None:
    repo = maven_project(tmp_path / "repo")
    (repo / "pom.xml").write_text(pom)
    code, report = verify(repo, tmp_path)
    test = check_named(report, "maven-test")
    assert (report["status"], code) == ("UNVERIFIED", 4), test
    assert test["cause"] == "toolchain_missing"
    assert artifact in str(test["note"]) and DEBIAN_MAVEN_REPO in str(test["note"]), test["note"]


@pytest.mark.slow
def test_a_failing_test_that_prints_mavens_offline_words_still_fails(tmp_path: Path) -> None:
    """A test that fails after printing what Maven says of an artifact it cannot have
    offline: its tests ran, so the failure is the code's, not the machine's lack."""
    says = (
        "in offline mode and the artifact org.example:absent:jar:1.0 has not been"
        " downloaded from it before"
    )
    wrong = WRONG.replace(
        "assertEquals(", f'System.out.println("{says}");\n        assertEquals(', 1
    )
    code, report = verify(maven_project(tmp_path / "repo", more_tests=wrong), tmp_path)
    test = check_named(report, "maven-test")
    assert (report["status"], code) == ("FAILED", 1), test
