"""Java: Maven and Gradle, their Surefire/JUnit XML reports, javac diagnostics.

Offline Maven. Checks run without network, and in the sandbox HOME is empty, so the
local repository a user's Maven would use (`~/.m2/repository`) is not there. Maven is
therefore pointed at a local repository explicitly and run offline (`-o
-Dmaven.repo.local=REPO`), REPO being, in this order:

- `ASSAY_MAVEN_REPO` when set on the host (an empty value: add nothing, Maven's own
  settings decide);
- Debian's packaged repository `/usr/share/maven-repo` when it exists (the `maven`
  package with `libsurefire-java`, `libmaven-compiler-plugin-java`, `junit4`...);
- otherwise nothing is added, and Maven uses its defaults.

The repository must be visible inside the sandbox (anything under /usr is). A command
that sets `-Dmaven.repo.local` or `-o` itself is left as it is.

Reports. Surefire writes `target/surefire-reports/TEST-*.xml` inside the workspace; it
cannot be told to write elsewhere. Each run asks for a report name suffix derived from
the run's own report directory (`-Dsurefire.reportNameSuffix=`), and only reports with
that suffix are read, so reports already in the tree are never taken for this run's;
they are read without following links, within a bound (`assay.untrusted_files`).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path

from assay.evidence import Check
from assay.tools.instrumented import Instrumented, Request
from assay.tools.spec import (
    Command,
    Ecosystem,
    EcosystemSpec,
    Manifest,
    Match,
    Native,
    TamperMarkers,
    ToolSpec,
)
from assay.verdict import Kind

#: Host variable naming the local Maven repository checks run against (empty: none).
MAVEN_REPO_VAR = "ASSAY_MAVEN_REPO"
#: Debian's repository of packaged Maven plugins and libraries.
DEBIAN_MAVEN_REPO = "/usr/share/maven-repo"
#: Where Surefire and Gradle write JUnit XML reports, relative to the project directory.
SUREFIRE_REPORTS = "target/surefire-reports"
GRADLE_REPORTS = "build/test-results/test"

#: Maven phases that run the tests, and phases that only compile or package.
_MAVEN_TEST_PHASES = frozenset({"test", "integration-test", "verify", "install", "deploy"})
_MAVEN_BUILD_PHASES = frozenset({"compile", "test-compile", "package"}) | _MAVEN_TEST_PHASES
_MAVEN_SKIPS_TESTS = ("-DskipTests", "-Dmaven.test.skip")
#: Gradle tasks that run the tests, and tasks that only compile.
_GRADLE_TEST_TASKS = frozenset({"test", "check", "build"})
_GRADLE_BUILD_TASKS = frozenset({"compileJava", "compileTestJava", "classes", "testClasses"})


def maven_repository(environ: Mapping[str, str] | None = None) -> str | None:
    """The local Maven repository checks run against, offline; None: Maven's defaults."""
    environ = os.environ if environ is None else environ
    configured = environ.get(MAVEN_REPO_VAR)
    if configured is not None:
        return configured or None
    return DEBIAN_MAVEN_REPO if os.path.isdir(DEBIAN_MAVEN_REPO) else None


def report_suffix(report_dir: Path, check: Check) -> str:
    """This run's report name suffix: derived from the run's own report directory, so that
    no report already in the tree can carry it."""
    digest = hashlib.sha256(f"{report_dir}\0{check.name}".encode()).hexdigest()
    return f"assay{digest[:16]}"


# --------------------------------------------------------------------------- instrumenting


#: Maven's flags that keep it from printing anything but errors.
_QUIET_FLAGS = frozenset({"-q", "--quiet"})


def _maven(request: Request) -> Instrumented:
    flags = ["-B", "-Dstyle.color=never"]
    repo = maven_repository()
    if repo and not request.has("-Dmaven.repo.local") and not request.has("-o", "--offline"):
        flags += ["-o", f"-Dmaven.repo.local={repo}"]
    flags.append(f"-Dsurefire.reportNameSuffix={report_suffix(request.report_dir, request.check)}")
    argv = request.argv
    if request.check.kind is Kind.TEST:
        # Quiet, Maven prints nothing until the run ends (`maven_natives`): a CI step's
        # `mvn -q verify` would go quiet for all of a long suite, as a hung test does.
        argv = (argv[0], *(word for word in argv[1:] if word not in _QUIET_FLAGS))
    return request.runs((argv[0], *flags, *argv[1:]))


def _gradle(request: Request) -> Instrumented:
    argv = request.argv
    if not request.has("--console"):
        argv = (argv[0], "--console=plain", *argv[1:])
    return request.runs(argv)


# --------------------------------------------------------------------------- recognising


def _maven_phase(rest: list[str]) -> Match | None:
    phases = {w for w in rest if not w.startswith("-")}
    skips = any(a.startswith(_MAVEN_SKIPS_TESTS) for a in rest)
    if phases & _MAVEN_TEST_PHASES and not skips:
        return Match(Kind.TEST, tuple(rest), name="maven-test")
    if phases & _MAVEN_BUILD_PHASES:
        return Match(Kind.BUILD, tuple(rest), name="maven-build")
    return None


def _gradle_task(rest: list[str]) -> Match | None:
    tasks = {w.rsplit(":", 1)[-1] for w in rest if not w.startswith("-")}
    if tasks & _GRADLE_TEST_TASKS:
        return Match(Kind.TEST, tuple(rest), name="gradle-test")
    if tasks & _GRADLE_BUILD_TASKS:
        return Match(Kind.BUILD, tuple(rest), name="gradle-build")
    return None


# --------------------------------------------------------------------------- manifests


def maven_natives(
    path: str, text: str, root_names: frozenset[str]
) -> tuple[list[Native], list[str]]:
    """`mvn test`, and a compile that the test run makes redundant (it compiles first).

    Not `mvn -q test`: quiet, Maven prints nothing until the whole run ends, and a suite
    longer than the no-output limit was stopped as hung; Surefire prints a line as each
    test class starts and ends."""
    mvn = "./mvnw" if "mvnw" in root_names else "mvn"
    why = f"Maven project ({path})"
    return [
        Native(
            Kind.BUILD,
            (mvn, "-q", "compile"),
            "maven",
            why,
            name="maven-build",
            redundant_with=frozenset({"maven-test"}),
        ),
        Native(Kind.TEST, (mvn, "test"), "maven", why, name="maven-test"),
    ], []


def gradle_natives(
    path: str, text: str, root_names: frozenset[str]
) -> tuple[list[Native], list[str]]:
    """`gradle test` (the project's wrapper when it has one), and `classes` as the build."""
    gradle = "./gradlew" if "gradlew" in root_names else "gradle"
    why = f"Gradle project ({path})" + ("; the project's wrapper" if gradle != "gradle" else "")
    return [
        Native(
            Kind.BUILD,
            (gradle, "-q", "classes"),
            "gradle",
            why,
            name="gradle-build",
            redundant_with=frozenset({"gradle-test"}),
        ),
        Native(Kind.TEST, (gradle, "-q", "test"), "gradle", why, name="gradle-test"),
    ], []


# --------------------------------------------------------------------------- declarations

MAVEN = ToolSpec(
    name="maven",
    ecosystem=Ecosystem.JAVA,
    binaries=("mvn", "mvnw"),
    version_args=("-B", "-v"),
    # "Apache Maven 3.8.7", possibly wrapped in colour codes
    version_pattern=re.compile(r"Apache Maven (\d[\w.-]*)"),
    install_hint="install Maven and a JDK (Debian: `apt-get install maven default-jdk-headless`)",
    commands=(Command(("mvn", "mvnw"), match=_maven_phase),),
    instrument=_maven,
    parser=("java", "parse_maven"),
    config_files=("**/.mvn/**",),
)
GRADLE = ToolSpec(
    name="gradle",
    ecosystem=Ecosystem.JAVA,
    binaries=("gradle", "gradlew"),
    version_args=("-v",),
    # "Gradle 8.5"
    version_pattern=re.compile(r"Gradle (\d[\w.-]*)"),
    install_hint="install Gradle (https://gradle.org/install) or commit the project's wrapper",
    commands=(Command(("gradle", "gradlew"), match=_gradle_task),),
    instrument=_gradle,
    parser=("java", "parse_gradle"),
    config_files=("**/gradle/wrapper/**", "gradle.properties"),
)
JAVA = ToolSpec(
    name="java",
    ecosystem=Ecosystem.JAVA,
    binaries=("java",),
    version_args=("-version",),
    # 'openjdk version "17.0.15" 2025-04-15', on stderr
    version_pattern=re.compile(r'version "([^"]+)"'),
    install_hint="install a JDK (Debian: `apt-get install default-jdk-headless`)",
    parser=("java", "parse_javac"),
)

ECOSYSTEM = EcosystemSpec(
    ecosystem=Ecosystem.JAVA,
    label="java",
    tools=(MAVEN, GRADLE, JAVA),
    manifests=(
        Manifest(("pom.xml",), maven_natives),
        Manifest(
            ("build.gradle.kts", "build.gradle", "settings.gradle.kts", "settings.gradle"),
            gradle_natives,
        ),
    ),
    test_files=("**/src/test/**", "**/src/it/**"),
    markers=TamperMarkers(
        test_names=(re.compile(r"@Test\b[^;{]*?\s(?:public\s+|protected\s+)?void\s+(\w+)\s*\("),),
        skip=r"@(?:Ignore|Disabled)\b|\bAssume\.assume\w*\s*\(",
        trivial_assertions=r"\bassertTrue\s*\(\s*true\s*\)|\bassertFalse\s*\(\s*false\s*\)"
        r"|\bassertEquals\s*\(\s*(?P<jsame>\w+)\s*,\s*(?P=jsame)\s*\)",
        assertions=r"\bassert(?:Equals|NotEquals|True|False|Null|NotNull|Same|NotSame|That"
        r"|Throws|ArrayEquals)\s*\(|\bfail\s*\(",
    ),
    steering_env=("JAVA", "JDK_JAVA_OPTIONS", "MAVEN", "M2_HOME", "GRADLE"),
    home_dirs=(".m2/repository", ".gradle/wrapper/dists"),
)
