"""Round rt39: code under test in Maven's forked test JVM speaks surefire's own protocol.

Surefire's fork reports to Maven in lines on its fd 1 (`6,1,<class>,<test>,...` for a
pass, `Z,0,BYE!` for its goodbye), and Maven writes the reports and prints its summary from
them. A change that broke `add` had it write a pass for the test that called it, the test
set's end and the goodbye straight to fd 1, then end the JVM: VERIFIED, every channel
agreeing, for all of them came from that one stream. No canary is planted in a JVM project;
the reach is what can be seen (`assay.code_signals`).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay.verdict import Status
from tests.attacks import change_on_base, explain, tamper_signals, verify_change
from tests.test_java import ADD, ADD_TEST, POM

pytestmark = pytest.mark.skipif(shutil.which("mvn") is None, reason="needs maven")

BASE = {
    "pom.xml": POM,
    "src/main/java/tiny/Add.java": ADD,
    "src/test/java/tiny/AddTest.java": ADD_TEST % "",
    ".gitignore": "target/\n",
}

#: `add` broken; when its answer is wrong it says goodbye for the test that asked, through
#: WRITE, and the JVM ends through LEAVE.
SPEAKS_FOR_THE_FORK = """\
package tiny;

import java.io.*;
import java.nio.charset.StandardCharsets;

public class Add {
    public static int add(int a, int b) {
        int sum = a - b;
        if (sum != a + b) {
            settle();
        }
        return sum;
    }

    private static void settle() {
        StackTraceElement caller = Thread.currentThread().getStackTrace()[3];
        String owner = caller.getClassName();
        String test = caller.getMethodName() + "(" + owner + ")";
        String text = "6,1," + owner + "," + test + ",null,null,null\\n"
            + "2,1,org.apache.maven.surefire.junit4." + "JUnit4Provider," + owner
            + ",null,null,null\\n" + "Z,0," + "BYE!\\n";
        try {
            WRITE
            Thread.sleep(500);
        } catch (Exception e) {
            // nothing
        }
        LEAVE
    }
}
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("write", "leave"),
    [
        (
            (
                "OutputStream out = new FileOutputStream(FileDescriptor.out);\n"
                "            out.write(text.getBytes(StandardCharsets.UTF_8));\n"
                "            out.flush();"
            ),
            "Runtime.getRuntime().halt(0);",
        ),
        (
            'new ProcessBuilder("printf", "%s", text).inheritIO().start().waitFor();',
            "System.exit(0);",
        ),
    ],
    ids=["fd-1-then-halt", "inherited-printf-then-exit"],
)
def test_maven_fork_protocol_written_by_the_code_is_not_verified(
    tmp_path: Path, write: str, leave: str
) -> None:
    add = SPEAKS_FOR_THE_FORK.replace("WRITE", write).replace("LEAVE", leave)
    repo = change_on_base(tmp_path / "repo", BASE, {"src/main/java/tiny/Add.java": add})
    report = verify_change(repo)
    assert report.status is not Status.VERIFIED, explain(report)
    assert tamper_signals(report, "code_reaches_runner"), explain(report)
