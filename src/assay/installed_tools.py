"""What assay's own install step put in the environment, proven unchanged by the project's
install steps (`--install --protect`).

Under `--install` the environment is made afresh: a virtualenv, then the linters, type
checkers and test runner the plan runs (assay's tools step: the virtualenv's own pip and
wheels from the index; no code of the project's has run yet), then the project's own
install steps. Those run the project's build code (`setup.py`, a build backend in the
tree) with the environment writable, so a change could rewrite pytest's files and the
lines of its install record that hash them, together. The record proof
(`assay.environment_proof`) cannot see that: the record is the only one there is.

So what the tools step installed is recorded as soon as it has run (`InstalledTools.after`):
each distribution's install record, proven file by file against the files then. Once
every install step has run, each of those files must still hash as it did
(`InstalledTools.changes`). A distribution the project's steps installed again, at the
version the project pins (pytest 7.1.2 where the tools step chose 7.4), was written while
the project's code ran: it must hold what the index's wheel of that version holds
(`assay.wheel_proof`). A file rewritten or removed, a distribution removed, a wheel that
differs or cannot be fetched: every Python check is left unproven (`inconclusive`, never
run). What the project's own steps install beyond the tools (its dependencies) has no
earlier record to be held to; the record proof is all there is for it.
"""

from __future__ import annotations

import csv
import io
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.base_requirements import normalise
from assay.install_records import (
    RECORD_MAX_BYTES,
    Budget,
    Reported,
    file_hash,
    read_distribution,
)
from assay.untrusted_files import list_untrusted, read_untrusted

__all__ = ["TOOLS_STEP", "InstalledTools"]

#: The install step that installs the plan's tools (`assay.install`).
TOOLS_STEP = "install-python-tools"
#: What installers write into a dist-info directory beside what the wheel holds.
_WRITTEN_BY_INSTALLERS = ("INSTALLER", "REQUESTED", "direct_url.json", "RECORD")
#: A version as a dist-info directory's name spells it (PEP 440, normalised).
_VERSION = re.compile(r"[0-9][0-9A-Za-z.+!_]*")
#: Problems named in a note; the rest are counted.
NAMED_AT_MOST = 3


@dataclass
class InstalledTools:
    """The environment `venv` of the workspace at `root`, as the tools step left it."""

    root: Path
    venv: str
    own: frozenset[str] = frozenset()
    """The project's own names (normalised), as its base declares them: a tool installed
    again under one of them is the project itself (pytest's or packaging's own tree),
    its files the change's code under test."""
    recorded: dict[str, dict[str, str]] = field(default_factory=dict)
    """dist-info directory (relative to `root`) -> {file (relative to `root`): its hash
    as its record writes it (`sha256=...`)}."""
    problems: list[str] = field(default_factory=list)
    taken: bool = False
    against_wheels: list[str] = field(default_factory=list)
    """The distributions installed again by the project's steps, proven against wheels."""
    the_project: list[str] = field(default_factory=list)
    """The tools the project's own distribution took the place of."""

    def after(self, step: str) -> None:
        """Called after each install step that succeeded: the record is taken after the
        tools step, before any step of the project's."""
        if step == TOOLS_STEP and not self.taken:
            self.taken = True
            self._take()

    def _take(self) -> None:
        budget = Budget()
        for site in self._sites():
            listed = list_untrusted(self.root, site)
            for name in sorted(listed) if isinstance(listed, list) else ():
                if not name.endswith(".dist-info"):
                    continue
                where = f"{site}/{name}"
                found = Reported()
                dist = read_distribution(self.root, site, name, self.venv, found, budget)
                if not dist.verified:
                    self.problems += found[:1] or [f"{where}: its install record does not hold"]
                    continue
                self.recorded[where] = _hashed_rows(self.root, site, where)

    def _sites(self) -> list[str]:
        lib = f"{self.venv}/lib"
        names = list_untrusted(self.root, lib)
        found = sorted(names) if isinstance(names, list) else []
        return [f"{lib}/{n}/site-packages" for n in found if n.startswith(("python", "pypy"))]

    def changes(self) -> list[str]:
        """What is no longer as the tools step left it, one sentence each (empty: all of it
        is, or no record was taken)."""
        changed = list(self.problems)
        budget = Budget()
        replaced: list[str] = []
        for where, files in self.recorded.items():
            if isinstance(list_untrusted(self.root, where), list):
                changed += _rewritten(self.root, where, files, budget)
            else:
                replaced.append(where)
        if replaced:
            changed += self._replacements_proven(replaced, budget)
        return changed

    def _replacements_proven(self, replaced: list[str], budget: Budget) -> list[str]:
        """Each distribution of `replaced` (dist-info directories gone since the record was
        taken) must have been installed again, at another version, as the index's wheel
        of that version holds it (`assay.wheel_proof`)."""
        from assay.wheel_proof import fetch_wheels

        problems: list[str] = []
        now: list[str] = []  # the dist-info directories that replaced them
        for where in replaced:
            found = _same_name(self.root, where)
            if found is not None and not _VERSION.fullmatch(_dist(found).split("-", 1)[-1]):
                problems.append(f"{found}: not the name of an installed version")
            elif found is None:
                problems.append(
                    f"{_dist(where)} was removed by the project's own install steps, whose "
                    "build code ran with the environment writable"
                )
            elif normalise(_dist(found).split("-")[0]) in self.own:
                self.the_project.append(_dist(found))
            else:
                now.append(found)
        if not now:
            return problems
        python = now[0].split("/")[-3].removeprefix("python")
        with tempfile.TemporaryDirectory(prefix="assay-wheels-") as scratch:
            wanted = [_dist(where).replace("-", "==", 1) for where in now]
            if fetch_wheels(wanted, python, Path(scratch)) is not None:
                # One at a time, to say which: one that does not come fails them all.
                for requirement in wanted:
                    if (why := fetch_wheels([requirement], python, Path(scratch))) is not None:
                        problems.append(
                            f"{requirement}, installed again by the project's own install "
                            f"steps while its build code could write the environment, cannot "
                            f"be proven: {why}"
                        )
            wheels = {normalise(w.name.split("-")[0]): w for w in Path(scratch).glob("*.whl")}
            for where in now:
                wheel = wheels.get(normalise(_dist(where).split("-")[0]))
                if wheel is None:
                    if not any(p.startswith(_dist(where).replace("-", "==", 1)) for p in problems):
                        problems.append(f"{_dist(where)}: no wheel of it came from the index")
                    continue
                differ = self._as_wheel(where, wheel, budget)
                if not differ:
                    self.against_wheels.append(_dist(where))
                problems += differ
        return problems

    def _as_wheel(self, where: str, wheel: Path, budget: Budget) -> list[str]:
        """How the distribution at `where` differs from `wheel`: a file that does not hold
        what the wheel holds, or one its record adds that no installer writes (the scripts
        of its entry points are what an installer writes for them)."""
        from assay.wheel_proof import differences, entry_script_problem, layout

        site = where.rsplit("/", 1)[0]
        dist = _dist(where)
        problems = [
            f"{p} (of {dist})" for p in differences(self.root, site, self.venv, wheel, budget)
        ]
        expected = layout(wheel, site, self.venv)
        # What installers write beside the wheel's files; a wheel's C headers go under
        # `include/`, which nothing runs.
        written = {f"{where}/{name}" for name in _WRITTEN_BY_INSTALLERS}
        headers = f"{self.venv}/include/"
        for path in _hashed_rows(self.root, site, where):
            if path in expected.files or path in written or path.startswith(headers):
                continue
            if (entry := expected.scripts.get(path)) is not None:
                if (problem := entry_script_problem(self.root, path, entry, self.venv)) is not None:
                    problems.append(problem)
                continue
            problems.append(f"{path}: listed by {dist}'s install record, but not its wheel's")
        return problems[:NAMED_AT_MOST] + (
            [f"{len(problems) - NAMED_AT_MOST} more files of {dist}"]
            if len(problems) > NAMED_AT_MOST
            else []
        )

    def note(self) -> str | None:
        """Why the Python checks cannot be believed, or None."""
        changed = self.changes()
        if not changed:
            return None
        more = len(changed) - NAMED_AT_MOST
        named = "; ".join(changed[:NAMED_AT_MOST]) + (f"; and {more} more" if more > 0 else "")
        return (
            f"the environment's tools changed while the project was installed: {named}. "
            "The project's build code (setup.py, an in-tree build backend) must not write "
            "into the tools assay installed, and a tool its steps install again, at the "
            "version it pins, must hold what the package index's wheel of that version holds"
        )

    def hold_unproven(self, unproven: dict[str, str], checks: Sequence[str]) -> dict[str, Any]:
        """Mark each of `checks` (the Python checks) unproven when the tools changed; what
        was held, for the run's record."""
        note = self.note()
        if note is not None:
            for name in checks:
                unproven.setdefault(name, f"{name}: {note}")
        return {
            "recorded_after": TOOLS_STEP if self.taken else None,
            "distributions": len(self.recorded),
            "proven_against_wheels": list(self.against_wheels),
            "the_projects_own": list(self.the_project),
            "problem": note,
        }


def _rewritten(root: Path, where: str, files: dict[str, str], budget: Budget) -> list[str]:
    """Each of `files` (the record taken of `where`) that no longer hashes as it did."""
    changed = []
    for path, recorded in files.items():
        algorithm, _, expected = recorded.partition("=")
        why = Reported()
        if file_hash(root, path, algorithm, why, budget) != expected:
            what = why[0].partition(": ")[2] if why else "its content was rewritten"
            changed.append(f"{path} of {_dist(where)} is no longer as assay installed it: {what}")
    return changed


def _dist(where: str) -> str:
    """`pytest-9.2.0` for `.../pytest-9.2.0.dist-info`."""
    return where.rsplit("/", 1)[-1].removesuffix(".dist-info")


def _same_name(root: Path, where: str) -> str | None:
    """The dist-info directory beside `where` (gone) of the same distribution, if any."""
    site, _, gone = where.rpartition("/")
    name = normalise(gone.split("-")[0])
    names = list_untrusted(root, site)
    for other in sorted(names) if isinstance(names, list) else ():
        if other.endswith(".dist-info") and normalise(other.split("-")[0]) == name:
            return f"{site}/{other}"
    return None


def _hashed_rows(root: Path, site: str, where: str) -> dict[str, str]:
    """The hashed rows of `where`'s record (which `read_distribution` has just proven), each
    path relative to `root`."""
    import posixpath

    data = read_untrusted(root, f"{where}/RECORD", limit=RECORD_MAX_BYTES, single_link=False)
    rows: dict[str, str] = {}
    if not isinstance(data, bytes):
        return rows
    for row in csv.reader(io.StringIO(data.decode("utf-8"))):
        if len(row) > 1 and row[1]:
            rows[posixpath.normpath(posixpath.join(site, row[0]))] = row[1]
    return rows
