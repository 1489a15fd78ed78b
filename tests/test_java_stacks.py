"""A hung Java test's place, read from the thread dump Surefire keeps (`java_stacks`)."""

from __future__ import annotations

from assay.parsers.java_stacks import Frame, dumped_lines, hung_test, main_thread_frames
from assay.stack_dumps import dump_signal

#: What Surefire 2.22 wrote of a dump (each line of it an entry; one entry's trace shown).
DUMPSTREAM = """\
# Created at 2026-12-07T20:05:58.190
Corrupted STDOUT by directly writing to native stream in forked JVM 1. Stream 'Full thread dump OpenJDK 64-Bit Server VM (17.0.15+6-Debian-1deb12u1 mixed mode, sharing):'.
java.lang.IllegalArgumentException: Stream stdin corrupted. Expected comma after third character in command 'x'.
\tat org.apache.maven.plugin.surefire.booterclient.output.ForkClient.processLine(ForkClient.java:210)

Corrupted STDOUT by directly writing to native stream in forked JVM 1. Stream '"main" #1 prio=5 os_prio=0 cpu=33819.60ms tid=0x1 nid=0x23f2 runnable  [0x00007f9bd7d1c000'.
Corrupted STDOUT by directly writing to native stream in forked JVM 1. Stream '   java.lang.Thread.State: RUNNABLE'.
Corrupted STDOUT by directly writing to native stream in forked JVM 1. Stream '\tat java.base@17.0.15/java.lang.Math.abs(Math.java:1)'.
Corrupted STDOUT by directly writing to native stream in forked JVM 1. Stream '\tat tiny.Add.add(Add.java:5)'.
Corrupted STDOUT by directly writing to native stream in forked JVM 1. Stream '\tat tiny.AddTest.adds(AddTest.java:9)'.
Corrupted STDOUT by directly writing to native stream in forked JVM 1. Stream '\tat org.junit.runners.ParentRunner.runLeaf(ParentRunner.java:366)'.
Corrupted STDOUT by directly writing to native stream in forked JVM 1. Stream ''.
Corrupted STDOUT by directly writing to native stream in forked JVM 1. Stream '"Reference Handler" #2 daemon prio=10'.
Corrupted STDOUT by directly writing to native stream in forked JVM 1. Stream '\tat tiny.Other.run(Other.java:7)'.
"""
SOURCES = {
    "tiny/Add.java": "src/main/java/tiny/Add.java",
    "tiny/AddTest.java": "src/test/java/tiny/AddTest.java",
    "tiny/Other.java": "src/main/java/tiny/Other.java",
}


def test_the_main_thread_names_the_test_and_the_project_frame_it_was_stuck_in() -> None:
    frames = main_thread_frames(dumped_lines(DUMPSTREAM))
    assert [f.cls for f in frames] == [
        "java.lang.Math",
        "tiny.Add",
        "tiny.AddTest",
        "org.junit.runners.ParentRunner",
    ]
    assert hung_test(frames, SOURCES) == (
        "tiny.AddTest.adds (stuck at src/main/java/tiny/Add.java:5 in tiny.Add.add)"
    )


def test_without_a_test_among_the_frames_nothing_is_named() -> None:
    frames = [Frame("tiny.Add", "add", "Add.java", 5)]
    assert hung_test(frames, SOURCES) is None
    assert hung_test(main_thread_frames(dumped_lines(DUMPSTREAM)), {}) is None
    # Lines outside Surefire's entries are no dump's: a test's own output is not read.
    assert main_thread_frames(['"main" #1', "\tat tiny.Add.add(Add.java:5)"]) != []
    assert list(dumped_lines('"main" #1\n\tat tiny.Add.add(Add.java:5)\n')) == []


def test_only_surefire_s_jvm_and_go_tests_are_asked_for_stacks() -> None:
    booter = "/w/target/surefire/surefirebooter1234.jar"
    assert dump_signal(("/usr/lib/jvm/java-17/bin/java", "-jar", booter)) is not None
    assert dump_signal(("/usr/lib/jvm/java-17/bin/java", "-jar", "/w/app.jar")) is None
    assert dump_signal(("/usr/bin/python3", booter)) is None
