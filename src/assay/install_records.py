"""One installed Python distribution checked against its install record, and what it says
about itself.

pip and uv write into each distribution's `.dist-info` a `RECORD`: every file installed,
with its sha256. Here each file listed is hashed (streamed, read as an untrusted file:
no link followed, no FIFO opened) and compared; what the distribution declares
(`METADATA`'s name and requirements, `entry_points.txt`'s plugin groups, its `.pth` and
start-up modules) is read only from files its record vouches for. A record proves its
files are the ones that were installed *with it*: it is written by whoever wrote the
files, so which distributions may load code into every run is decided against what the
base declares (`accepted_names`), not by the record.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from assay.base_requirements import Declared, normalise, parse_requirement
from assay.untrusted_files import Link, Refused, chunks, open_untrusted, read_untrusted

#: Runners assay itself starts, and what installs packages: accepted whether declared or not.
RUNNER_DISTS = frozenset(
    {"pytest", "mypy", "ruff", "pyright", "basedpyright", "flake8", "pylint", "black", "tox", "nox"}
)
INSTALLER_DISTS = frozenset({"pip", "setuptools", "wheel"})
#: Entry point groups a runner loads without being asked: every plugin installed is loaded.
AUTOLOADED_GROUPS = ("pytest11", "flake8.extension", "flake8.report")
#: Modules `site` imports at every interpreter start, from anywhere on the import path.
STARTUP_MODULES = ("sitecustomize", "usercustomize")
#: Files of site-packages whose lines run at every start: `.pth`, and PEP 829's `.start`
#: (Python 3.15), where meson-python and scikit-build-core move their loaders' calls.
STARTUP_FILES = (".pth", ".start")
#: The hashes a record may use (PEP 376 forbids md5 and sha1).
HASHES = ("sha256", "sha384", "sha512")

#: Bounds on what is read: files in install records are streamed, metadata read whole.
PROVE_MAX_BYTES = 64 * 1024**3
RECORD_MAX_BYTES = 64 * 1024 * 1024
METADATA_MAX_BYTES = 16 * 1024 * 1024
DIRECT_URL_MAX_BYTES = 1024 * 1024

#: Where a problem is reported: (path relative to the root, what is wrong).
Report = Callable[[str, str], None]


class Reported(list[str]):
    """The problems a proof reports (a `Report`), each as `PATH: WHY`."""

    def __call__(self, path: str, why: str) -> None:
        self.append(f"{path}: {why}")


@dataclass
class Budget:
    """Bytes hashed so far across one proof, against `PROVE_MAX_BYTES`."""

    hashed: int = 0


@dataclass
class Distribution:
    """One installed distribution, as its dist-info directory describes it."""

    directory: str
    """The dist-info directory, relative to the root it was read under."""
    name: str = ""
    """Normalised (`assay.base_requirements.normalise`)."""
    verified: bool = False
    """Every file its record lists is there and hashes as the record says."""
    owned: set[str] = field(default_factory=set)
    """Every path its record lists, relative to the root."""
    requires: list[tuple[str, frozenset[str], str | None]] = field(default_factory=list)
    """(name, extras asked for, the extra of this distribution it is conditional on)."""
    entry_points: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    """Autoloaded groups only: group -> [(name, value)]."""
    startup: list[str] = field(default_factory=list)
    """Its top-level names that run at every interpreter start (`x.pth`, `sitecustomize.py`)."""
    editable_from: str | None = None
    """The directory it is an editable install of (`direct_url.json`), if it is one."""
    built_from: str | None = None
    """The local directory or archive it was built from (`direct_url.json`), editable or not."""


def read_distribution(
    root: Path, site: str, directory: str, venv: str, report: Report, budget: Budget
) -> Distribution:
    """The distribution whose dist-info is `site/directory` beneath `root`: its record
    checked file by file (every problem reported, none raised), then, if it holds, what
    it declares. `venv`: the environment no recorded path may leave."""
    where = f"{site}/{directory}"
    dist = Distribution(where, name=normalise(directory.removesuffix(".dist-info").split("-")[0]))
    problems = 0

    def counted(path: str, problem: str) -> None:
        nonlocal problems
        problems += 1
        report(path, problem)

    record = read_untrusted(root, f"{where}/RECORD", limit=RECORD_MAX_BYTES, single_link=False)
    if not isinstance(record, bytes):
        report(f"{where}/RECORD", "no readable install record: its files cannot be proven")
        return dist
    try:
        rows = list(csv.reader(io.StringIO(record.decode("utf-8"))))
    except (UnicodeDecodeError, csv.Error) as exc:
        report(f"{where}/RECORD", f"the install record does not parse ({exc})")
        return dist
    for row in rows:
        if row:
            _check_row(root, site, where, venv, row, dist, counted, budget)
    if not _read_metadata(root, where, dist):
        counted(f"{where}/METADATA", "missing, unreadable, or not in the install record")
    dist.verified = problems == 0
    if not dist.verified:
        return dist
    dist.entry_points = _entry_points(root, where, dist)
    for path in dist.owned:
        top = path[len(site) + 1 :] if path.startswith(site + "/") else ""
        first = top.split("/", 1)[0]
        if (top.endswith(STARTUP_FILES) and "/" not in top) or first.split(".", 1)[
            0
        ] in STARTUP_MODULES:
            dist.startup.append(first)
    dist.built_from, editable = _local_source(root, where)
    dist.editable_from = dist.built_from if editable else None
    return dist


def _check_row(
    root: Path,
    site: str,
    where: str,
    venv: str,
    row: list[str],
    dist: Distribution,
    report: Report,
    budget: Budget,
) -> None:
    path, digest = row[0], (row[1] if len(row) > 1 else "")
    target = posixpath.normpath(posixpath.join(site, path)) if not path.startswith("/") else ""
    if not target.startswith(venv + "/"):
        report(f"{where}/RECORD", f"it names a file outside the environment: {path[:200]}")
        return
    dist.owned.add(target)
    if not digest:
        # Unhashed by design: the record itself, its signatures, and byte-code (never read:
        # runners start with PYTHONPYCACHEPREFIX elsewhere).
        unhashed_ok = target == f"{where}/RECORD" or target.endswith(("RECORD.jws", "RECORD.p7s"))
        if not (unhashed_ok or ("/__pycache__/" in target and target.endswith(".pyc"))):
            report(target, "its install record gives no hash for it")
        return
    algorithm, _, expected = digest.partition("=")
    if algorithm not in HASHES:
        report(target, f"its install record hashes it with {algorithm[:20]!r}, not sha256")
        return
    actual = file_hash(root, target, algorithm, report, budget)
    if actual is not None and actual != expected:
        report(target, f"its content is not what {dist.name} installed (its hash is not RECORD's)")


def file_hash(root: Path, rel: str, algorithm: str, report: Report, budget: Budget) -> str | None:
    """The `algorithm` digest of the file `rel` beneath `root` as install records write it,
    or None (with the problem reported): a link, missing, refused, over the budget."""
    with open_untrusted(root, rel, single_link=False) as entry:
        if isinstance(entry, Link):
            report(rel, "a symbolic link where its install record lists a file")
            return None
        if entry is None:
            report(rel, "missing, though its install record lists it")
            return None
        if isinstance(entry, Refused):
            report(rel, entry.reason)
            return None
        if budget.hashed + entry.size > PROVE_MAX_BYTES:
            report(rel, f"the environment holds more than {PROVE_MAX_BYTES} bytes to prove")
            return None
        digest = hashlib.new(algorithm)
        try:
            for chunk in chunks(entry):
                digest.update(chunk)
        except OSError as exc:
            report(rel, f"it could not be read ({exc.strerror})")
            return None
        budget.hashed += entry.size
    return base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode("ascii")


def _read_metadata(root: Path, where: str, dist: Distribution) -> bool:
    """Read Name and Requires-Dist from a METADATA the record vouches for into `dist`."""
    if f"{where}/METADATA" not in dist.owned:
        return False
    data = read_untrusted(root, f"{where}/METADATA", limit=METADATA_MAX_BYTES, single_link=False)
    if not isinstance(data, bytes):
        return False
    for line in data.decode("utf-8", "replace").splitlines():
        if not line.strip():
            break  # the headers end at the first blank line; the description follows
        key, _, value = line.partition(":")
        key = key.strip().lower()
        if key == "name" and value.strip():
            dist.name = normalise(value.strip())
        elif key == "requires-dist":
            requirement, _, marker = value.partition(";")
            parsed = parse_requirement(requirement)
            if parsed is not None:
                extra = re.search(r"\bextra\s*==\s*['\"]([^'\"]+)['\"]", marker)
                conditional = normalise(extra.group(1)) if extra else None
                dist.requires.append((parsed[0], parsed[1], conditional))
    return True


def _entry_points(root: Path, where: str, dist: Distribution) -> dict[str, list[tuple[str, str]]]:
    if f"{where}/entry_points.txt" not in dist.owned:
        return {}
    data = read_untrusted(
        root, f"{where}/entry_points.txt", limit=METADATA_MAX_BYTES, single_link=False
    )
    return autoloaded_entry_points(data) if isinstance(data, bytes) else {}


def autoloaded_entry_points(data: bytes) -> dict[str, list[tuple[str, str]]]:
    """Entry points of `AUTOLOADED_GROUPS` in an `entry_points.txt`, parsed as
    `importlib.metadata` parses it (sections; `name = value` split at the first `=`;
    `#` and `;` comments), so that nothing it would load is missed here."""
    groups: dict[str, list[tuple[str, str]]] = {}
    section = None
    for raw in data.decode("utf-8", "replace").splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
            continue
        name, eq, value = line.partition("=")
        if eq and section in AUTOLOADED_GROUPS:
            groups.setdefault(section, []).append((name.strip(), value.strip()))
    return groups


def entry_point_module(value: str) -> str:
    """The module an entry point's value names (`pkg.plugin:obj [extra]` -> `pkg.plugin`)."""
    return value.split("[", 1)[0].split(":", 1)[0].strip()


def _local_source(root: Path, where: str) -> tuple[str | None, bool]:
    """The local directory or archive `direct_url.json` says this was installed from,
    and whether the install is editable."""
    data = read_untrusted(
        root, f"{where}/direct_url.json", limit=DIRECT_URL_MAX_BYTES, single_link=False
    )
    if not isinstance(data, bytes):
        return None, False
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        return None, False
    url = document.get("url") if isinstance(document, dict) else None
    if not isinstance(url, str) or not url.startswith("file://"):
        return None, False
    info = document.get("dir_info")
    return url.removeprefix("file://"), isinstance(info, dict) and bool(info.get("editable"))


def accepted_names(dists: Iterable[Distribution], declared: Declared) -> set[str]:
    """Names the base's manifests declare (and the runners and installers assay needs
    anyway), and everything those require among the verified distributions; an extra's
    requirements only where that extra was asked for."""
    by_name = {d.name: d for d in dists if d.verified}
    wanted: dict[str, set[str]] = {
        n: set(declared.extras.get(n, ())) for n in declared.names | RUNNER_DISTS | INSTALLER_DISTS
    }
    queue = list(wanted)
    while queue:
        name = queue.pop()
        dist = by_name.get(name)
        if dist is None:
            continue
        for required, extras, conditional in dist.requires:
            if conditional is not None and conditional not in wanted[name]:
                continue
            known = wanted.get(required)
            if known is None:
                wanted[required] = set(extras)
                queue.append(required)
            elif not extras <= known:
                known.update(extras)
                queue.append(required)
    return set(wanted)
