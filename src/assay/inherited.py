"""What a process hands every process it starts besides its environment: its umask and
its resource limits (read without changing them; the standard library has no getter for
the umask but setting it)."""

from __future__ import annotations

import os


def current_umask() -> int:
    """This process's umask (set and set back: another thread creating a file in between
    gets 077, stricter, never looser)."""
    umask = os.umask(0o077)
    os.umask(umask)
    return umask


def resource_limits() -> dict[str, tuple[int, int]]:
    """Every resource limit of this process, by its `resource` name (`RLIMIT_NOFILE`)."""
    import resource  # not on every start: only a warm client and a sandbox ask

    return {
        name: resource.getrlimit(getattr(resource, name))
        for name in dir(resource)
        if name.startswith("RLIMIT_")
    }
