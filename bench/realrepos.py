"""`assay verify` on a corpus of real repositories, pristine and with planted faults, against the
maintainers' own test command run by hand; prints a markdown table and how many cells were right.

Run: `.venv/bin/python bench/realrepos.py [CORPUS] [NAME ...] [--only NAME] [--variants pristine,hang]`.

The corpus (default /var/tmp/realrepos) holds one directory per repository, set up as its README
says (virtualenv, node_modules, lockfile...), `_variants/NAME--VARIANT` with the files a variant
changes, and `corpus.toml` describing each repository: its maintainers' test command (`test`),
extra environment (`env`) and, where it differs from the default, the expected status (`expect`).

Each cell copies the repository to a scratch directory, overlays the variant, and runs both
`assay verify --json --no-cache` and the command by hand with the scratch copy bind-mounted over
the repository's own path in a private mount namespace: virtualenvs, editable installs and
lockfiles name that path, so a copy anywhere else would quietly test the pristine tree.
The repositories themselves are never written.  Needs root (`unshare --mount`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ASSAY = str(Path(sys.executable).parent / "assay")
DEFAULT_CORPUS = Path("/var/tmp/realrepos")
VARIANTS = ("pristine", "compile", "wrong", "hang")
EXPECTED = {
    "pristine": "VERIFIED",
    "compile": "FAILED",
    "wrong": "FAILED",
    "hang": "INDETERMINATE",
}
#: What the maintainers' command by hand should do on each variant: exit 0, fail, or not finish.
HAND_EXPECTED = {"pristine": "ok", "compile": "fail", "wrong": "fail", "hang": "timeout"}
#: An assay run that outlives this many per-check timeouts is stuck, not slow.
ASSAY_GUARD_FACTOR = 10
TAIL_LINES = 12

# Mount the scratch copy over the repository's own path, then run the command there.
# Arguments go in as positional parameters, so nothing from the corpus is parsed by the shell.
BIND_AND_RUN = 'mount --bind "$1" "$2" && cd "$2" && shift 2 && exec "$@"'


class CorpusError(Exception):
    """The corpus description is missing or malformed."""


@dataclass(frozen=True, slots=True)
class Repo:
    """One repository of the corpus, as corpus.toml describes it."""

    name: str
    path: Path
    source: str
    language: str
    test: str
    env: dict[str, str] = field(default_factory=dict)
    expect: dict[str, str] = field(default_factory=dict)
    assay_args: tuple[str, ...] = ()
    """Options given to `assay verify` besides the corpus's own (`--install`)."""

    def expected(self, variant: str) -> str:
        return self.expect.get(variant, EXPECTED[variant])


@dataclass(frozen=True, slots=True)
class Run:
    """One process run: its exit code (None when it was killed at its deadline) and wall time."""

    exit_code: int | None
    wall_s: float
    stdout: str
    stderr: str

    @property
    def outcome(self) -> str:
        if self.exit_code is None:
            return "timeout"
        return "ok" if self.exit_code == 0 else "fail"

    def tail(self) -> str:
        lines = (self.stdout + self.stderr).rstrip().splitlines()
        return "\n".join(lines[-TAIL_LINES:])


@dataclass(frozen=True, slots=True)
class Cell:
    """One repository × variant: what assay said and what the command by hand did."""

    repo: Repo
    variant: str
    status: str
    problems: list[str]
    note: str
    assay: Run
    hand: Run

    @property
    def expected(self) -> str:
        return self.repo.expected(self.variant)

    @property
    def right(self) -> bool:
        return self.status == self.expected

    @property
    def false_verified(self) -> bool:
        return self.status == "VERIFIED" and self.expected != "VERIFIED"

    @property
    def hand_as_expected(self) -> bool:
        return self.hand.outcome == HAND_EXPECTED[self.variant]


def load_corpus(corpus: Path) -> list[Repo]:
    """Read corpus.toml; every repository named there must exist and state its test command."""
    description = corpus / "corpus.toml"
    try:
        data = tomllib.loads(description.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CorpusError(f"cannot read {description}: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise CorpusError(f"{description}: {exc}") from exc
    table = data.get("repo")
    if not isinstance(table, dict) or not table:
        raise CorpusError(f"{description}: no [repo.NAME] tables")
    repos = []
    for name, entry in table.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("test"), str):
            raise CorpusError(f"{description}: [repo.{name}] needs a test = '...' command")
        # `dir`: another entry's tree, verified another way (`assay_args`).
        path = corpus / str(entry.get("dir", name))
        if not path.is_dir():
            raise CorpusError(f"{description}: [repo.{name}] has no directory {path}")
        unknown = set(entry.get("expect", {})) - set(VARIANTS)
        if unknown:
            raise CorpusError(
                f"{description}: [repo.{name}] expects unknown variants {sorted(unknown)}"
            )
        repos.append(
            Repo(
                name=name,
                path=path,
                source=str(entry.get("source", "")),
                language=str(entry.get("language", "")),
                test=entry["test"],
                env={str(k): str(v) for k, v in entry.get("env", {}).items()},
                expect={str(k): str(v) for k, v in entry.get("expect", {}).items()},
                assay_args=tuple(str(a) for a in entry.get("assay_args", ())),
            )
        )
    return repos


def variant_dir(corpus: Path, repo: Repo, variant: str) -> Path | None:
    """The files a variant changes; None for the pristine tree."""
    if variant == "pristine":
        return None
    return corpus / "_variants" / f"{repo.path.name}--{variant}"


def prepare(repo: Repo, overlay: Path | None, scratch: Path) -> Path:
    """A private copy of the repository with the variant's files laid over it."""
    tree = scratch / repo.name
    shutil.copytree(repo.path, tree, symlinks=True)
    if overlay is not None:
        lay_over(overlay, tree)
    return tree


def lay_over(overlay: Path, tree: Path) -> None:
    """Copy every file and link of overlay into tree, replacing what is there (links included)."""
    for source in sorted(overlay.rglob("*")):
        target = tree / source.relative_to(overlay)
        if source.is_dir() and not source.is_symlink():
            target.mkdir(parents=True, exist_ok=True)
            continue
        if target.is_symlink() or target.is_file():
            target.unlink()
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)


def run(argv: Sequence[str], env: dict[str, str], timeout: float) -> Run:
    """Run argv in its own process group; at the deadline the whole group is killed."""
    start = time.monotonic()
    proc = subprocess.Popen(
        argv,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        code = None
    return Run(code, time.monotonic() - start, stdout, stderr)


def in_place(tree: Path, repo: Repo, argv: Sequence[str]) -> list[str]:
    """argv run in the repository's own path, which shows the scratch tree."""
    return [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "--",
        "sh",
        "-c",
        BIND_AND_RUN,
        "sh",
        str(tree),
        str(repo.path),
        *argv,
    ]


def read_report(assay: Run) -> tuple[str, list[str], str]:
    """Status, non-passing checks as name:cause, and note, from assay's JSON output."""
    try:
        report: dict[str, Any] = json.loads(assay.stdout)
    except json.JSONDecodeError:
        tail = assay.tail() or "(no output)"
        return "ERROR", [], f"assay printed no JSON (exit {assay.exit_code}): {tail}"
    problems = [
        f"{check.get('name')}:{check.get('cause')}"
        for check in report.get("checks", [])
        if check.get("verdict") != "pass"
    ]
    return str(report.get("status", "ERROR")), problems, str(report.get("note", ""))


def measure(
    corpus: Path, repo: Repo, variant: str, timeout: float, hand_timeout: float, save: Path | None
) -> Cell:
    """One cell: assay first, then the command by hand, each on a fresh copy of the variant."""
    env = {**os.environ, **repo.env}
    overlay = variant_dir(corpus, repo, variant)
    verify = [ASSAY, "verify", str(repo.path), "--json", "--no-cache", "--timeout", str(timeout)]
    verify += repo.assay_args
    hand_argv = ["sh", "-c", repo.test]
    with tempfile.TemporaryDirectory(prefix=f"realrepos-{repo.name}-") as scratch:
        tree = prepare(repo, overlay, Path(scratch))
        assay = run(in_place(tree, repo, verify), env, timeout * ASSAY_GUARD_FACTOR)
    with tempfile.TemporaryDirectory(prefix=f"realrepos-{repo.name}-") as scratch:
        # A fresh copy: what assay did must not warm or break the command by hand.
        tree = prepare(repo, overlay, Path(scratch))
        hand = run(in_place(tree, repo, hand_argv), env, hand_timeout)
    status, problems, note = read_report(assay)
    cell = Cell(repo, variant, status, problems, note, assay, hand)
    if save is not None:
        keep(save, cell)
    return cell


def saved(save: Path, repo: Repo, variant: str, suffix: str) -> Path:
    return save / f"{repo.name}--{variant}{suffix}"


def keep(save: Path, cell: Cell) -> None:
    """assay's JSON and stderr, the output by hand, and the cell itself (for --reuse)."""
    repo, variant = cell.repo, cell.variant
    saved(save, repo, variant, ".json").write_text(cell.assay.stdout, encoding="utf-8")
    saved(save, repo, variant, ".err").write_text(cell.assay.stderr, encoding="utf-8")
    saved(save, repo, variant, ".hand").write_text(
        f"$ {repo.test}\nexit: {cell.hand.exit_code}\n{cell.hand.stdout}{cell.hand.stderr}",
        encoding="utf-8",
    )
    record = {
        "status": cell.status,
        "problems": cell.problems,
        "note": cell.note,
        "assay": {"exit_code": cell.assay.exit_code, "wall_s": cell.assay.wall_s},
        "hand": {"exit_code": cell.hand.exit_code, "wall_s": cell.hand.wall_s},
    }
    saved(save, repo, variant, ".cell.json").write_text(json.dumps(record), encoding="utf-8")


def reuse(save: Path, repo: Repo, variant: str) -> Cell | None:
    """A cell measured by an earlier run into the same --save directory, if there is one."""
    try:
        record = json.loads(saved(save, repo, variant, ".cell.json").read_text(encoding="utf-8"))
        hand_output = saved(save, repo, variant, ".hand").read_text(encoding="utf-8")
        assay = Run(record["assay"]["exit_code"], float(record["assay"]["wall_s"]), "", "")
        hand = Run(record["hand"]["exit_code"], float(record["hand"]["wall_s"]), hand_output, "")
        return Cell(
            repo, variant, record["status"], record["problems"], record["note"], assay, hand
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def row(cell: Cell) -> str:
    status = cell.status if cell.right else f"**{cell.status}** ✗"
    hand = cell.hand.outcome if cell.hand.exit_code is None else f"exit {cell.hand.exit_code}"
    if not cell.hand_as_expected:
        hand += " (!)"
    ratio = cell.assay.wall_s / cell.hand.wall_s if cell.hand.wall_s > 0 else float("inf")
    return (
        f"| {cell.repo.name} | {cell.variant} | {cell.expected} | {status} | "
        f"{', '.join(cell.problems) or '—'} | {cell.assay.wall_s:.1f} | {hand} | "
        f"{cell.hand.wall_s:.1f} | {ratio:.1f} |"
    )


def table(cells: list[Cell]) -> str:
    lines = [
        "| repo | variant | expected | assay | non-passing checks | assay s | by hand | by hand s | ratio |",
        "|---|---|---|---|---|---|---|---|---|",
        *(row(cell) for cell in cells),
    ]
    return "\n".join(lines)


def summary(cells: list[Cell]) -> str:
    right = sum(cell.right for cell in cells)
    false_verified = [cell for cell in cells if cell.false_verified]
    lines = [
        "",
        f"cells right: {right} / {len(cells)}",
        f"false VERIFIED: {len(false_verified)}"
        + "".join(f"\n  - {c.repo.name} {c.variant}: {c.note}" for c in false_verified),
    ]
    wrong = [cell for cell in cells if not cell.right]
    if wrong:
        lines.append("wrong cells:")
        lines.extend(
            f"  - {c.repo.name} {c.variant}: {c.status} (expected {c.expected}): {c.note}"
            for c in wrong
        )
    odd = [c for c in cells if not c.hand_as_expected and c.variant != "pristine"]
    if odd:
        lines.append("by hand, not as the variant should (the maintainers' command missed it too):")
        lines.extend(
            f"  - {c.repo.name} {c.variant}: {c.hand.outcome}, should {HAND_EXPECTED[c.variant]}"
            for c in odd
        )
    return "\n".join(lines)


def pristine_failures(cells: list[Cell]) -> list[Cell]:
    """Cells whose by-hand command did not pass on the pristine tree: the corpus is broken there."""
    return [c for c in cells if c.variant == "pristine" and not c.hand_as_expected]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("names", nargs="*", help="repositories to run (default: all)")
    parser.add_argument("--only", action="append", default=[], metavar="NAME")
    parser.add_argument(
        "--variants",
        default=",".join(VARIANTS),
        help=f"comma-separated, from {','.join(VARIANTS)} (default: all)",
    )
    parser.add_argument("--jobs", type=int, default=1, help="cells run side by side (default 1)")
    parser.add_argument(
        "--timeout", type=float, default=60.0, help="assay's --timeout (default 60)"
    )
    parser.add_argument(
        "--hand-timeout", type=float, default=60.0, help="deadline for the command by hand"
    )
    parser.add_argument(
        "--hang-hand-timeout",
        type=float,
        default=20.0,
        help="deadline for the command by hand on the hang variant (default 20)",
    )
    parser.add_argument("--save", type=Path, help="keep assay's JSON and both outputs here")
    parser.add_argument(
        "--reuse", action="store_true", help="take cells already measured into --save from there"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown or not variants:
        print(
            f"error: unknown variants {unknown}; choose from {', '.join(VARIANTS)}", file=sys.stderr
        )
        return 2
    if args.jobs < 1:
        print("error: --jobs must be at least 1", file=sys.stderr)
        return 2
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        print(
            "error: needs root and unshare(1) to show each copy at its repository's path",
            file=sys.stderr,
        )
        return 2
    try:
        repos = load_corpus(args.corpus)
    except CorpusError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    wanted = set(args.names) | set(args.only)
    missing = sorted(wanted - {repo.name for repo in repos})
    if missing:
        print(f"error: not in the corpus: {', '.join(missing)}", file=sys.stderr)
        return 2
    if wanted:
        # In the order asked for, so the interesting ones can go first.
        order = [*args.names, *args.only]
        repos = sorted((r for r in repos if r.name in wanted), key=lambda r: order.index(r.name))
    if args.save is not None:
        args.save.mkdir(parents=True, exist_ok=True)

    jobs = []
    for repo in repos:
        for variant in variants:
            overlay = variant_dir(args.corpus, repo, variant)
            if overlay is not None and not overlay.is_dir():
                print(f"warning: {repo.name} has no {variant} variant ({overlay})", file=sys.stderr)
                continue
            jobs.append((repo, variant))

    def one(job: tuple[Repo, str]) -> Cell:
        repo, variant = job
        if args.reuse and args.save is not None:
            earlier = reuse(args.save, repo, variant)
            if earlier is not None:
                return earlier
        hand_timeout = args.hang_hand_timeout if variant == "hang" else args.hand_timeout
        try:
            cell = measure(args.corpus, repo, variant, args.timeout, hand_timeout, args.save)
        except OSError as exc:  # the copy could not be made: say so in the cell, go on
            nothing = Run(None, 0.0, "", "")
            cell = Cell(repo, variant, "ERROR", [], f"could not prepare: {exc}", nothing, nothing)
        print(
            f"{repo.name} {variant}: {cell.status} ({cell.assay.wall_s:.0f} s), "
            f"by hand {cell.hand.outcome} ({cell.hand.wall_s:.0f} s)",
            file=sys.stderr,
            flush=True,
        )
        return cell

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        cells = list(pool.map(one, jobs))

    print(table(cells))
    print(summary(cells))
    broken = pristine_failures(cells)
    for cell in broken:
        print(
            f"\n!!! BY HAND FAILED ON PRISTINE {cell.repo.name}: `{cell.repo.test}` gave "
            f"{cell.hand.outcome} (exit {cell.hand.exit_code}); its cells measure nothing.\n"
            f"{cell.hand.tail()}",
            file=sys.stderr,
        )
        print(f"\n!!! by hand failed on pristine {cell.repo.name}: {cell.hand.outcome}")
    if broken or any(cell.false_verified for cell in cells):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
