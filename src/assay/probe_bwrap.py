"""The bubblewrap probe's answer, remembered across runs while nothing it depends on changed.

Proving bubblewrap works here (`bwrap --version`, then a real confined `true` with every
option a check uses) costs a bare `assay run` about a tenth of a second, on every run.
Its answer depends on the binaries it ran (bwrap and the util-linux helpers run inside),
on the kernel's settings for user namespaces (until the next boot), on who runs it and
on the temp dir its scratch lives in. A success is stored under a key made of all of
these -- each binary's path, device, inode, size, mtime and ctime -- in assay's state
directory (`assay.state_dir`); a binary replaced, touched or moved, a reboot or another
temp dir gives another key, and the probe runs again. A failure is never stored: the
next run tries again.

The record only ever saves a probe: a forged or stale entry cannot make a check pass,
because every check still runs under the real bubblewrap, and a sandbox that does not
start is a failed start.
"""

from __future__ import annotations

import os
import re

from assay.state_dir import default_cache_dir

__all__ = ["BWRAP_PROBE_FILE", "probe_key", "recall", "remember"]

#: The record's file in assay's state directory.
BWRAP_PROBE_FILE = "bwrap-probe.txt"
#: Version of the key's derivation (and of the probe it stands for): bump on a change.
SCHEMA = "assay.bwrap-probe/1"
#: Entries kept: one per bubblewrap binary and temp dir in use, a handful at most.
MAX_ENTRIES = 16
#: Kernel settings that decide whether unprivileged user namespaces may be made.
_USERNS_SETTINGS = (
    "/proc/sys/kernel/unprivileged_userns_clone",
    "/proc/sys/user/max_user_namespaces",
    "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
)
#: `assay.probe_record.NO_PROBE_CACHE_VAR`, named here: that module loads the tool registry.
#: Set to a non-empty value other than "0", every run probes bubblewrap too.
NO_PROBE_CACHE_VAR = "ASSAY_NO_PROBE_CACHE"
#: What a remembered answer may look like (`bwrap 0.8.0`): anything else is not ours.
_DESCRIPTION = re.compile(r"bwrap [\w.+~-]{1,64}")


def probe_key(binaries: list[str], tempdir: str) -> str | None:
    """The key a probe of `binaries` (bwrap first, then its helpers) with scratch in
    `tempdir` is stored under; None when one of them cannot be identified."""
    parts = [SCHEMA, f"euid={os.geteuid()}", f"boot={_read('/proc/sys/kernel/random/boot_id')}"]
    parts += [f"{os.path.basename(path)}={_read(path)}" for path in _USERNS_SETTINGS]
    for path in binaries:
        identity = _identity(path)
        if identity is None:
            return None
        parts.append(identity)
    try:  # the directory itself, not its times: they move with every file made in it
        place = os.stat(tempdir)
    except OSError:
        return None
    parts.append(f"{tempdir}:{place.st_dev}:{place.st_ino}")
    key = " ".join(parts)
    return key if key.isprintable() and "\t" not in key else None


def recall(key: str) -> str | None:
    """The description (`bwrap 0.8.0`) stored under `key`, or None."""
    return None if _disabled() else _entries().get(key)


def remember(key: str, description: str) -> None:
    """Store `description` under `key`; a record that cannot be written is only a
    probe that runs again next time."""
    if _disabled() or not _DESCRIPTION.fullmatch(description):
        return
    entries = _entries()
    entries.pop(key, None)
    entries[key] = description  # the newest last: the oldest are dropped first
    kept = list(entries.items())[-MAX_ENTRIES:]
    directory = default_cache_dir()
    scratch = directory / f"{BWRAP_PROBE_FILE}.{os.getpid()}.new"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        scratch.write_text("".join(f"{k}\t{d}\n" for k, d in kept), encoding="utf-8")
        scratch.replace(directory / BWRAP_PROBE_FILE)  # readers see the old file or the new
    except OSError:
        scratch.unlink(missing_ok=True)


def _disabled() -> bool:
    return os.environ.get(NO_PROBE_CACHE_VAR, "") not in ("", "0")


def _entries() -> dict[str, str]:
    try:
        text = (default_cache_dir() / BWRAP_PROBE_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    entries: dict[str, str] = {}
    for line in text.splitlines():
        key, tab, description = line.partition("\t")
        if tab and key.startswith(SCHEMA + " ") and _DESCRIPTION.fullmatch(description):
            entries[key] = description
    return entries


def _identity(path: str) -> str | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (
        f"{path}:{info.st_dev}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}"
    )


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii", errors="replace") as file:
            return file.read(128).strip()
    except OSError:
        return "-"
