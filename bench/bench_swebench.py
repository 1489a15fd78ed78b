"""Benchmarks for grading SWE-bench instances: throughput (instances per minute) at
--concurrency 1 and 2, and the cost of the rerun policy (failing tests run again, twice by
default) against no reruns, on attempts whose tests fail (`nop`) and on attempts that pass
(`oracle`). Baselines are measured in the same run; every timed run is checked (exit 0,
every attempt scored, the oracle resolving every instance, nop none), else the benchmark
stops.

    python bench/bench_swebench.py [--corpus /var/tmp/realrepos] [--repeat 2]

The instances are made from small real repositories of the corpus `bench/realrepos.py`
reads (toolz and idna, pure Python, tested with pytest), in SWE-bench's format: a bug
planted in the library at the base commit, the gold patch that removes it, a test patch
adding a test that catches it (FAIL_TO_PASS) beside one of the project's own tests
(PASS_TO_PASS); they are imported with `assay tasks import` as a user would.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PYTHON = sys.executable
ASSAY = shutil.which("assay", path=os.path.dirname(PYTHON)) or shutil.which("assay") or ""
#: pytest (and the projects' test dependencies) come from this environment, as in the suite.
ENV = {**os.environ, "PATH": f"{os.path.dirname(PYTHON)}{os.pathsep}{os.environ['PATH']}"}
ENV.pop("PYTHONDONTWRITEBYTECODE", None)  # measure what users get
DEFAULT_CORPUS = Path("/var/tmp/realrepos")
#: What is left out of a corpus repository's copy: its set-up, not its source.
IGNORED = shutil.ignore_patterns(".venv", ".ruff_cache", ".pytest_cache", ".coverage", "*.egg-info")


@dataclass(frozen=True, slots=True)
class Bug:
    """One instance: `fixed` -> `buggy` in `path` at the base; a test appended to `tests`."""

    repo: str
    name: str
    path: str
    fixed: str
    buggy: str
    tests: str
    test: str
    pass_to_pass: str


BUGS = (
    Bug(
        "toolz",
        "second",
        "toolz/itertoolz.py",
        "    seq = iter(seq)\n    next(seq)\n    return next(seq)\n",
        "    seq = iter(seq)\n    return next(seq)\n",
        "toolz/tests/test_itertoolz.py",
        "def test_bench_second_of_an_iterator():\n    assert second(iter('ABC')) == 'B'\n",
        "test_first",
    ),
    Bug(
        "toolz",
        "count",
        "toolz/itertoolz.py",
        "    return sum(1 for i in seq)\n",
        "    return sum(1 for i in seq) - 1\n",
        "toolz/tests/test_itertoolz.py",
        "def test_bench_count_of_an_iterator():\n    assert count(iter([1, 2, 3])) == 3\n",
        "test_first",
    ),
    Bug(
        "idna",
        "label-length",
        "idna/core.py",
        "    if len(label) > 63:\n",
        "    if len(label) > 64:\n",
        "tests/test_idna.py",
        "def test_bench_label_of_64_is_too_long():\n"
        "    assert not idna.core.valid_label_length('a' * 64)\n",
        "IDNATests::test_check_bidi",
    ),
    Bug(
        "idna",
        "hyphen",
        "idna/core.py",
        '    if label[0] == "-" or label[-1] == "-":\n',
        '    if label[0] == "-":\n',
        "tests/test_idna.py",
        "def test_bench_trailing_hyphen():\n"
        "    try:\n"
        "        idna.core.check_hyphen_ok('abc-')\n"
        "    except idna.IDNAError:\n"
        "        return\n"
        "    raise AssertionError('a trailing hyphen was let through')\n",
        "IDNATests::test_check_bidi",
    ),
)


def run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """`argv`, which must succeed: a run that fails is an error, never a figure."""
    kwargs.setdefault("env", ENV)
    done = subprocess.run(argv, capture_output=True, text=True, check=False, **kwargs)
    if done.returncode != 0:
        sys.exit(f"benchmark command failed ({done.returncode}): {argv}\n{done.stderr[-2000:]}")
    return done


def git(repo: Path, *args: str) -> str:
    identity = ["-c", "user.email=bench@assay", "-c", "user.name=bench"]
    return run(["git", "-C", str(repo), *identity, *args]).stdout


def make_instance(corpus: Path, clones: Path, bug: Bug) -> dict[str, Any]:
    """A clone of the corpus repository with `bug` planted at its base commit, and its
    instance (gold patch and test patch made by git, as the datasets' are)."""
    repo = clones / f"bench__{bug.repo}-{bug.name}"
    shutil.copytree(corpus / bug.repo, repo, ignore=IGNORED)
    git(repo, "init", "-q", "-b", "main")
    if bug.repo == "idna":  # its own tests are unittest's; pytest runs them as they are
        with (repo / "pyproject.toml").open("a") as handle:
            handle.write("\n[tool.pytest.ini_options]\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "upstream")
    source = repo / bug.path
    fixed = source.read_text()
    if fixed.count(bug.fixed) != 1:
        sys.exit(f"{bug.repo}: {bug.path} no longer holds the code the benchmark plants a bug in")
    source.write_text(fixed.replace(bug.fixed, bug.buggy))
    git(repo, "commit", "-qam", "bug")
    base = git(repo, "rev-parse", "HEAD").strip()
    source.write_text(fixed)
    gold = git(repo, "diff")
    git(repo, "checkout", "-q", "--", bug.path)
    tests = repo / bug.tests
    before = tests.read_text()
    tests.write_text(before + "\n\n" + bug.test)
    test_patch = git(repo, "diff")
    git(repo, "checkout", "-q", "--", bug.tests)
    name = bug.test.split("(", 1)[0].removeprefix("def ")
    return {
        "instance_id": repo.name,
        "repo": f"bench/{bug.repo}-{bug.name}",
        "base_commit": base,
        "patch": gold,
        "test_patch": test_patch,
        "FAIL_TO_PASS": json.dumps([f"{bug.tests}::{name}"]),
        "PASS_TO_PASS": json.dumps([f"{bug.tests}::{bug.pass_to_pass}"]),
        "problem_statement": f"{bug.repo}: {bug.name} is wrong.\n",
    }


def with_reruns(tasks: Path, out: Path, reruns: int) -> Path:
    """A copy of the task folders whose tests are rerun `reruns` times."""
    shutil.copytree(tasks, out)
    for toml in out.glob("*/task.toml"):
        text = toml.read_text()
        toml.write_text(
            text.replace("[verification]\n", f"[verification]\nrerun_failures = {reruns}\n")
        )
    return out


def grade(tasks: Path, agent: str, store: Path, concurrency: int) -> tuple[float, dict[str, Any]]:
    """`assay eval` of every task: its wall time and its summary, checked."""
    started = time.perf_counter()
    done = run(
        [ASSAY, "eval", str(tasks), "--agent", agent, "--json"]
        + ["--store", str(store), "--concurrency", str(concurrency)]
    )
    wall = time.perf_counter() - started
    summary: dict[str, Any] = json.loads(done.stdout)
    resolved = {row["task_id"]: row["resolved"] for row in summary["attempts"]}
    expected = agent == "oracle"
    if summary["errors"] or set(resolved.values()) != {expected}:
        shown = json.dumps(summary["attempts"], indent=1)[-4000:]
        sys.exit(
            f"eval {agent} -c{concurrency}: not every instance was graded as expected\n{shown}"
        )
    return wall, summary


def reruns_ran(store: Path) -> int:
    """How many rerun processes the attempts recorded in `store` ran (from the evidence)."""
    with sqlite3.connect(store) as db:
        documents = [json.loads(d) for (d,) in db.execute("SELECT document FROM evidence")]
    return sum(
        len((check.get("extra") or {}).get("reruns", {}).get("runs") or [])
        for evidence in documents
        for check in ((evidence.get("verification") or {}).get("report") or {}).get("checks", [])
    )


def row(name: str, value: float, baseline: float | None, unit: str, note: str = "") -> None:
    ratio = f"ratio {value / baseline:>6.2f}" if baseline else " " * 12
    base = f"baseline {baseline:>8.2f} {unit:<5}" if baseline is not None else " " * 24
    print(f"{name:<52} {value:>8.2f} {unit:<5} {base} {ratio}   {note}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--repeat", type=int, default=2, help="timings per configuration")
    args = parser.parse_args()
    if args.repeat < 1:
        sys.exit(f"--repeat must be at least 1, got {args.repeat}")
    if not ASSAY:
        sys.exit("assay is not installed next to this interpreter")
    missing = sorted({b.repo for b in BUGS if not (args.corpus / b.repo).is_dir()})
    if missing:
        sys.exit(f"{args.corpus}: no {', '.join(missing)} (see bench/realrepos.py)")
    with tempfile.TemporaryDirectory(prefix="bench-swebench-") as tmp:
        scratch = Path(tmp)
        scratch.chmod(0o755)
        clones = scratch / "repos"
        clones.mkdir()
        instances = [make_instance(args.corpus, clones, bug) for bug in BUGS]
        jsonl = scratch / "instances.jsonl"
        jsonl.write_text("".join(json.dumps(i) + "\n" for i in instances))
        tasks = scratch / "tasks"
        run([ASSAY, "tasks", "import", str(jsonl), "--repos", str(clones), "--out", str(tasks)])
        count = len(instances)
        repos = sorted({b.repo for b in BUGS})
        print(f"{count} SWE-bench instances from {', '.join(repos)} (whole test suite per grading)")

        # Each configuration is timed `--repeat` times, in turn with the one it is compared
        # with (first in one round, second in the next), and its best time kept: the
        # machine's other work slows one run, not all.
        def best(runs: dict[str, tuple[Path, str, int]]) -> dict[str, float]:
            times: dict[str, list[float]] = {name: [] for name in runs}
            for round_ in range(args.repeat):
                order = list(runs.items())
                for name, (folder, agent, concurrency) in order[:: -1 if round_ % 2 else 1]:
                    store = scratch / f"{name}-{round_}.sqlite"
                    times[name].append(grade(folder, agent, store, concurrency)[0])
                    if name == "nop-2":
                        reruns[name] = reruns_ran(store)
            return {name: min(t) for name, t in times.items()}

        reruns: dict[str, int] = {}
        none = with_reruns(tasks, scratch / "reruns-0", 0)
        two = with_reruns(tasks, scratch / "reruns-2", 2)
        # The first grading of a set of task folders pays for what later ones find warm
        # (the bundles, the files read): each set is graded once, untimed, first.
        for folder in (tasks, none, two):
            grade(folder, "oracle", scratch / f"warm-{folder.name}.sqlite", 2)
        # Throughput: the oracle graded, rerun policy as the tasks say (the default, 2).
        walls = best({f"c{c}": (tasks, "oracle", c) for c in (1, 2)})
        for concurrency in (1, 2):
            row(
                f"throughput --concurrency {concurrency} (instances/min)",
                count / walls[f"c{concurrency}"] * 60,
                count / walls["c1"] * 60,
                "/min",
                f"wall {walls[f'c{concurrency}']:.1f} s",
            )

        # The rerun policy's cost, at --concurrency 1: reruns 2 against reruns 0.
        for agent, what in (("nop", "failing tests"), ("oracle", "passing tests")):
            walls = best({f"{agent}-0": (none, agent, 1), f"{agent}-2": (two, agent, 1)})
            ran = f"; rerun processes: {reruns[agent + '-2']}" if agent == "nop" else ""
            row(
                f"grading, {what} ({agent}): reruns 2 / reruns 0",
                walls[f"{agent}-2"] / count,
                walls[f"{agent}-0"] / count,
                "s",
                f"per instance{ran}",
            )
        print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
