"""A recorded patch applied as SWE-bench's harness applies a prediction: by the first of its
methods that takes it, in the sandbox, where the agent would have worked.

SWE-bench's harness (`swebench.harness.run_evaluation.GIT_APPLY_CMDS`) tries, resetting the
tree between tries: `git apply --verbose`, `git apply --verbose --3way`, `git apply
--verbose --reject`, `patch --batch --forward --fuzz=5 -p1 -i`; then, when none took it,
counts it applied if `git apply --check --reverse` says it already is. Here:

- `git apply` is tried as a check first, then for real;
- `--3way` is not tried: it merges from the preimage blobs the patch names, which for a
  patch made against the task's base are the files it already failed on, and it needs a
  writable index, which the workspace's read-only `.git` is not;
- `--reject` is not run: it exits 0 only when every hunk applied, which is `git apply`
  succeeding, and otherwise leaves a half-applied tree the harness then resets;
- `patch --fuzz=5` is run with `--dry-run` first, so a patch it cannot apply whole leaves
  nothing behind, and with `--no-backup-if-mismatch`, so a fuzzy hunk leaves no `.orig`
  file in the agent's change;
- `git apply --check --reverse` last, as the harness does.

A patch is hostile input. Before `patch` runs (GNU patch reads names from several headers
and trusts the tree), every path it names is checked: an absolute path, a `..` component,
a path in `.git`, a path through a symlink in the workspace, or a symlink the patch
itself creates, is refused with its name, and `patch` never runs. Everything runs in the
sandbox, which shows only the workspace writable; the check is what keeps a backend
without isolation (`local`) inside it too. The sections of files `exclude` protects are
taken out of the patch before any method sees it (as SWE-bench puts the test patch's files
back over a prediction).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from assay.eval.change import AGENT_DIR, is_protected
from assay.eval.failures import Stage, StageError

if TYPE_CHECKING:
    from assay.eval.runners import AgentResult
    from assay.process import ProcessResult
    from assay.sandbox.base import Sandbox, Workspace

#: Where the patch is written in the workspace (never part of the agent's change).
PATCH_NAME = "prediction.patch"
#: Each method's own deadline: a task's patch applies in well under this.
APPLY_TIMEOUT_S = 120.0
GIT_APPLY = ("git", "apply", "--verbose", "--binary", "--whitespace=nowarn")
PATCH = ("patch", "--batch", "--forward", "--fuzz=5", "-p1", "--no-backup-if-mismatch")
#: How a method is named in the record: as SWE-bench's harness spells it.
PATCH_SHOWN = "patch --batch --forward --fuzz=5 -p1"

_DIFF_GIT = re.compile(rb"^diff --git \"?a/(.+?)\"? \"?b/(.+?)\"?$")
_HUNK = re.compile(rb"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
_NAMED = (b"rename from ", b"rename to ", b"copy from ", b"copy to ")


@dataclass(slots=True)
class Section:
    """One file's part of a patch (or the text before the first), with the paths it names."""

    text: bytes = b""
    paths: set[str] = field(default_factory=set)
    git: bool = False
    """Opened by a `diff --git` header."""
    hunks: int = 0
    links: bool = False
    """It makes a symlink (mode 120000)."""


def split_patch(patch: bytes) -> list[Section]:
    """`patch` cut into its files' sections, each naming its paths as `patch -p1` and
    `git apply` read them; a hunk's lines are counted, so a removed line that reads like a
    header (`--- a/x`) stays a line of its hunk. The sections' texts join to `patch`."""
    sections = [Section()]
    lines = patch.splitlines(keepends=True)
    old = new = 0
    at = 0
    while at < len(lines):
        line = lines[at]
        bare = line.rstrip(b"\r\n")
        current = sections[-1]
        if old > 0 or new > 0:
            if bare[:1] in (b" ", b"") or bare.startswith((b"-", b"+", b"\\")):
                old -= bare[:1] in (b" ", b"", b"-")
                new -= bare[:1] in (b" ", b"", b"+")
                current.text += line
                at += 1
                continue
            old = new = 0  # a hunk cut short: whatever follows is read as headers
        if bare.startswith(b"diff --git "):
            current = Section(git=True)
            sections.append(current)
            if match := _DIFF_GIT.match(bare):
                current.paths |= {_name(match[1]), _name(match[2])}
        elif bare.startswith(b"--- ") and at + 1 < len(lines) and lines[at + 1].startswith(b"+++ "):
            next_bare = lines[at + 1].rstrip(b"\r\n")
            named = {_header_path(bare[4:]), _header_path(next_bare[4:])}
            if not _continues(current, named):
                current = Section()
                sections.append(current)
            current.paths |= named
            current.text += line + lines[at + 1]
            at += 2
            continue
        elif match := _HUNK.match(bare):
            current.hunks += 1
            old = int(match[1]) if match[1] is not None else 1
            new = int(match[2]) if match[2] is not None else 1
        elif bare.startswith(_NAMED):
            current.paths.add(bare.split(b" ", 2)[2].decode("utf-8", "replace"))
        elif bare.startswith((b"new file mode 120000", b"new mode 120000")):
            current.links = True
        current.text += line
        at += 1
    for section in sections:
        section.paths.discard("")
        section.paths.discard("/dev/null")
    return sections


def _continues(section: Section, named: set[str]) -> bool:
    """Whether a `---`/`+++` pair naming `named` belongs to `section`: a `diff --git`
    section's own, before its hunks, naming its files (a rename has none of its own)."""
    return (
        section.git
        and not section.hunks
        and b"\n--- " not in b"\n" + section.text
        and named <= section.paths | {"/dev/null"}
    )


def _name(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _header_path(raw: bytes) -> str:
    """A `---`/`+++` header's path as `patch -p1` takes it: up to a tab (a timestamp may
    follow), without its first component."""
    name = _name(raw.split(b"\t", 1)[0]).strip().strip('"')
    if name == "/dev/null":
        return name
    if name.startswith("/"):
        return name  # absolute: kept whole, to be refused
    first, slash, rest = name.partition("/")
    return rest if slash else first


def outside_paths(sections: Sequence[Section], root: Path) -> list[str]:
    """Why each path of `sections` would take `patch` out of the workspace at `root`:
    absolute, `..`, in `.git`, through a symlink already in the tree, or a symlink the
    patch makes. Only metadata is read (`lstat`), no link is followed."""
    found: list[str] = []
    for section in sections:
        if section.links:
            found += [f"{p} (a symlink the patch makes)" for p in sorted(section.paths)]
        for path in sorted(section.paths):
            parts = path.split("/")
            if path.startswith("/"):
                found.append(f"{path} (an absolute path)")
            elif ".." in parts:
                found.append(f"{path} (a '..' component)")
            elif parts[0] == ".git":
                found.append(f"{path} (in .git)")
            elif link := _through_link(root, parts):
                found.append(f"{path} (through the symlink {link})")
    return found


def _through_link(root: Path, parts: list[str]) -> str:
    """The first part of `parts` under `root` that is a symlink, or ''."""
    at = root
    for depth, part in enumerate(parts):
        at = at / part
        try:
            mode = os.lstat(at).st_mode
        except OSError:
            return ""  # nothing there: the rest is made by the patch, as plain files
        if stat.S_ISLNK(mode):
            return "/".join(parts[: depth + 1])
    return ""


def apply_prediction(
    name: str,
    patch: bytes,
    sandbox: Sandbox,
    workspace: Workspace,
    *,
    exclude: tuple[str, ...] = (),
) -> AgentResult:
    """Apply `patch` in `workspace` by the first method that takes it (module docstring).
    A patch no method takes is the agent's result (exit 1, each method's reason on stderr),
    never an infrastructure error; only a tool that could not start is."""
    from assay.eval.runners import AgentResult

    sections = split_patch(patch)
    left_out = sorted({p for s in sections for p in s.paths if is_protected(p, exclude)})
    kept = [s for s in sections if not any(is_protected(p, exclude) for p in s.paths)]
    notes = [f"left out (protected by the task): {', '.join(left_out)}"] if left_out else []
    if left_out and not any(s.paths for s in kept):
        # SWE-bench applies it, then puts the test files back: nothing of it stays.
        note = "nothing left to apply: " + "; ".join(notes)
        return AgentResult(runner=name, exit_code=0, note=note)
    relpath = f"{AGENT_DIR}/{PATCH_NAME}"
    sandbox.write_file(workspace, relpath, b"".join(s.text for s in kept))
    tried: list[str] = []
    outputs: list[str] = []

    def run(argv: Sequence[str]) -> ProcessResult:
        result = sandbox.run(workspace, [*argv, relpath], timeout=APPLY_TIMEOUT_S)
        if not result.started:
            why = result.start_error or result.start_failure
            raise StageError(Stage.RUN, "runner_start_failed", f"{argv[0]} could not start: {why}")
        outputs.append(f"$ {' '.join(argv)} {relpath}\n{result.stdout.text}{result.stderr.text}")
        return result

    def done(method: str, result: ProcessResult) -> AgentResult:
        note = "; ".join([f"applied with `{method}`", *tried, *notes])
        return AgentResult(
            runner=name,
            exit_code=0,
            duration_s=result.duration_s,
            stdout="\n".join(outputs),
            note=note,
        )

    check = run((*GIT_APPLY, "--check"))
    if check.exit_code == 0:
        return done("git apply --verbose", run(GIT_APPLY))
    tried.append(f"git apply refused it: {_last_lines(check)}")
    outside = outside_paths(kept, workspace.path)
    if outside:
        reason = "refused before `patch` ran, paths outside the workspace: " + ", ".join(outside)
    else:
        dry = run((*PATCH, "--dry-run", "-i"))
        if dry.exit_code == 0:
            return done(PATCH_SHOWN, run((*PATCH, "-i")))
        reason = f"{PATCH_SHOWN} refused it: {_last_lines(dry)}"
    tried.append(reason)
    if run(("git", "apply", "--check", "--reverse")).exit_code == 0:
        return done("git apply --check --reverse (already applied)", check)
    stderr = "\n".join([*outputs, f"no method applied it: {'; '.join(tried)}"])
    return AgentResult(
        runner=name,
        exit_code=1,
        duration_s=check.duration_s,
        stderr=stderr,
        note="; ".join(["the patch did not apply", *notes]),
    )


def _last_lines(result: ProcessResult) -> str:
    said = [
        line.strip()
        for line in (result.stderr.text + "\n" + result.stdout.text).splitlines()
        if line.strip() and not line.startswith(("Checking patch", "patching file"))
    ]
    return " / ".join(said[-3:]) or f"exit {result.exit_code}"
