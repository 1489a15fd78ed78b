"""The pnpm, yarn or bun release a Node project names, fetched from npm into assay's cache
when the machine has none on PATH, so that its install and its scripts can run.

corepack would do this, but it refuses registries whose metadata carries no signature it
knows. The release comes from the npm registry only (the project chooses which release of
the real package, never a package or a place), unpacked with its scripts off, and where
`packageManager` pins a sha512 the fetched tarball must have it. The cached copy is shown
read-only inside the sandbox, like any toolchain; nothing of the repository runs on the host.
bun is a native binary: its npm package ships it in a package per platform (`@oven/bun-linux-x64`),
which npm installs beside it, and which its install script, left off, would copy into place.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from assay.state_dir import default_cache_dir
from assay.verification import Check

if TYPE_CHECKING:
    from assay.plan import Plan
    from assay.process_result import ProcessResult

#: `name@1.2.3`, then corepack's optional `+sha512.<hex>`: nothing else names a release.
_DECLARED = re.compile(
    r"^(pnpm|yarn|bun)@(\d{1,4}\.\d{1,4}\.\d{1,4}(?:-[0-9A-Za-z.]{1,40})?)"
    r"(?:\+sha512\.([0-9a-f]{128}))?$"
)
#: pnpm-lock.yaml's `lockfileVersion` -> the pnpm major that reads it without rewriting it.
_PNPM_BY_LOCKFILE = {"9.0": "10", "6.0": "8", "6.1": "8", "5.4": "7", "5.3": "7"}
#: yarn.lock's `__metadata` version (yarn 2 and later) -> the yarn major that writes it.
_BERRY_BY_LOCKFILE = {"8": "4", "6": "3", "5": "2", "4": "2"}
#: bun's lockfiles: text since bun 1.2, binary before.
BUN_LOCKFILES = ("bun.lock", "bun.lockb")
#: Where a release's executables are, below its directory in the cache, when not npm's.
_BIN_DIRS = {"bun": "bin"}
#: How long npm may take to fetch one release.
FETCH_TIMEOUT_S = 120.0
#: The cache's own directory for the releases, below assay's cache.
CACHE_NAME = "package-managers"


@dataclass(frozen=True, slots=True)
class Release:
    """A package manager's release as an npm package."""

    manager: str
    """What the project runs: `pnpm` or `yarn`."""
    package: str
    """The npm package that holds it (yarn 2 and later: `@yarnpkg/cli-dist`)."""
    spec: str
    """Its version, or a major (`10`) where only the lockfile says which."""
    sha512: bytes | None = None
    """The tarball's digest `packageManager` pins, if it pins one."""

    @property
    def label(self) -> str:
        return f"{self.manager}@{self.spec}"


def wanted(root: Path) -> Release | None:
    """The pnpm, yarn or bun release the project at `root` uses, if it uses one: its
    `packageManager` field, else what its lockfile says. None for npm."""
    from assay.untrusted_files import read_untrusted

    manifest = read_untrusted(root, "package.json", limit=1 << 20)
    if not isinstance(manifest, bytes):
        return None
    try:
        declared = json.loads(manifest).get("packageManager")
    except (ValueError, AttributeError, RecursionError):
        return None  # not JSON, not an object, or nested past what the parser takes
    if isinstance(declared, str):
        return _declared(declared.strip())
    lockfile = _head(root, "pnpm-lock.yaml")
    if lockfile is not None:
        major = _PNPM_BY_LOCKFILE.get(_first_value(lockfile, "lockfileVersion") or "")
        return Release("pnpm", "pnpm", major) if major else None
    lockfile = _head(root, "yarn.lock")
    if lockfile is not None:
        if b"__metadata:" not in lockfile:
            return Release("yarn", "yarn", "1")
        major = _BERRY_BY_LOCKFILE.get(_first_value(lockfile, "version") or "")
        return Release("yarn", "@yarnpkg/cli-dist", major) if major else None
    if any(_head(root, name) is not None for name in BUN_LOCKFILES):
        return Release("bun", "bun", "1")
    return None


def _head(root: Path, rel: str) -> bytes | None:
    """The first bytes of a lockfile: its version is said at its top."""
    from assay.untrusted_files import OpenFile, open_untrusted

    with open_untrusted(root, rel) as found:
        if not isinstance(found, OpenFile):
            return None
        try:
            return os.pread(found.fd, 4096, 0)
        except OSError:
            return None


def _declared(field: str) -> Release | None:
    match = _DECLARED.match(field)
    if match is None:
        return None  # npm, or a form no release answers to (a URL, a range)
    manager, version, digest = match.groups()
    if manager in ("pnpm", "bun"):
        package = manager
    else:  # yarn 1 is the `yarn` package; yarn 2 and later are published as cli-dist
        package = "yarn" if version.startswith("1.") else "@yarnpkg/cli-dist"
    return Release(manager, package, version, bytes.fromhex(digest) if digest else None)


def _first_value(text: bytes, key: str) -> str | None:
    found = re.search(rb"^\s*" + key.encode() + rb":\s*['\"]?([0-9.]+)", text, re.MULTILINE)
    return found.group(1).decode() if found else None


@dataclass(frozen=True, slots=True)
class Provided:
    """What became of the project's package manager, missing from PATH."""

    bin_dir: Path | None
    """Where it is (assay's cache); None: it could not be had."""
    note: str


def provide(root: Path, *, fetch: bool) -> Provided | None:
    """The project's package manager when the machine has none on PATH: from assay's
    cache, fetched into it first when `fetch` (the caller lets the network be used).
    None: nothing to provide (npm, or the machine has it)."""
    release = wanted(root)
    if release is None or shutil.which(release.manager) is not None:
        return None
    home = default_cache_dir() / CACHE_NAME / f"{release.package.replace('/', '+')}@{release.spec}"
    bin_dir = home / _BIN_DIRS.get(release.manager, "node_modules/.bin")
    if not (bin_dir / release.manager).is_file():
        if not fetch:
            return Provided(None, f"{release.label} is not on PATH; `--install` fetches it")
        why = _fetch(release, home)
        if why is not None:
            return Provided(None, why)
    return Provided(bin_dir, f"{release.label} is not on PATH: run from assay's cache, {home}")


def _fetch(release: Release, home: Path) -> str | None:
    """Install `release` into `home` with the machine's npm; a string says why not."""
    from assay.process import run_process

    npm = shutil.which("npm")
    if npm is None:
        return f"no npm to fetch {release.label} with"
    try:
        home.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{home.name}-", dir=home.parent))
    except OSError as exc:
        return f"{release.label} could not be kept in {home.parent}: {exc.strerror}"
    try:
        argv = [npm, "install", "--prefix", str(staging), "--ignore-scripts", "--no-audit"]
        argv += ["--no-fund", "--no-save", f"{release.package}@{release.spec}"]
        # In the staging directory no configuration of the project's is near: the host's
        # npm settings apply (registry, proxy, certificates), its environment scrubbed.
        done = run_process(argv, cwd=staging, timeout=FETCH_TIMEOUT_S)
        if done.exit_code != 0:
            return f"npm could not fetch {release.label}: {_why(done)}"
        wrong = _digest_mismatch(release, staging)
        if wrong:
            return wrong
        if release.manager == "bun" and not _link_bun(staging):
            return f"npm fetched {release.label} without a binary for {_platform()}"
        # mkdtemp's 0700 would close the release to the sandbox's user where it is shown.
        staging.chmod(0o755)
        try:
            staging.rename(home)
        except OSError as exc:
            if not home.is_dir():  # else another verification put it there first
                return f"{release.label} could not be kept in {home}: {exc.strerror}"
        return None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _link_bun(staging: Path) -> bool:
    """`bin/bun` and `bin/bunx` in `staging`, links to the binary of this machine's
    platform package (glibc's before musl's), relative so that they hold wherever the cache
    is shown; False when npm installed none."""
    for package in (f"bun-{_platform()}", f"bun-{_platform()}-musl"):
        binary = staging / "node_modules" / "@oven" / package / "bin" / "bun"
        if binary.is_file():
            (staging / "bin").mkdir()
            for name in ("bun", "bunx"):  # bun is bunx when called by that name
                (staging / "bin" / name).symlink_to(os.path.relpath(binary, staging / "bin"))
            return True
    return False


def _platform() -> str:
    """This machine as bun names its platform packages (`linux-x64`, `linux-aarch64`)."""
    machine = os.uname().machine
    arch = {"x86_64": "x64", "amd64": "x64", "arm64": "aarch64"}.get(machine, machine)
    return f"{os.uname().sysname.lower()}-{arch}"


def _why(done: ProcessResult) -> str:
    if not done.started:
        return done.start_error or "npm did not start"
    if done.timed_out:
        return f"no answer in {FETCH_TIMEOUT_S:.0f} s"
    for line in done.stderr.text.splitlines():
        # npm's first error after its code: `npm error notarget No matching version found`.
        said = re.sub(r"^npm (?:error|ERR!) ", "", line).strip()
        if said != line.strip() and said and not said.startswith("code "):
            return said
    return f"npm exited {done.exit_code}"


def _digest_mismatch(release: Release, staging: Path) -> str | None:
    """Why the fetched tarball is not the one `packageManager` pins, else None."""
    if release.sha512 is None:
        return None
    try:
        locked = json.loads((staging / "node_modules" / ".package-lock.json").read_text())
        integrity = locked["packages"][f"node_modules/{release.package}"]["integrity"]
        fetched = base64.b64decode(integrity.removeprefix("sha512-"), validate=True)
    except (OSError, ValueError, KeyError, TypeError, binascii.Error):
        return f"npm recorded no sha512 for {release.label} to check against packageManager"
    if fetched != release.sha512:
        return f"{release.label} from npm does not have the sha512 packageManager pins"
    return None


def on_path(checks: Sequence[Check], bin_dir: Path) -> list[Check]:
    """`checks` with `bin_dir` on PATH after what they had: it is found by name, by the
    check and by every script it runs."""
    prepared = []
    for check in checks:
        path = check.env.get("PATH") or os.environ.get("PATH") or os.defpath
        prepared.append(replace(check, env={**check.env, "PATH": f"{path}{os.pathsep}{bin_dir}"}))
    return prepared


def with_package_manager(the_plan: Plan, provided: Provided | None) -> Plan:
    """`the_plan` told of the package manager provided (its checks find it on PATH)."""
    if provided is None:
        return the_plan
    checks = the_plan.checks
    if provided.bin_dir is not None:
        checks = tuple(on_path(checks, provided.bin_dir))
    return replace(the_plan, checks=checks, notes=(*the_plan.notes, provided.note))
