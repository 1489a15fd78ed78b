"""Which environment variables a child process sees: a policy plus the caller's overlay."""

from __future__ import annotations

import enum
import os
import re
from collections.abc import Mapping


class EnvPolicy(enum.StrEnum):
    """How much of the host environment a child inherits."""

    INHERIT = "inherit"
    """The host environment as it is."""
    SCRUB = "scrub"
    """The host environment minus secret-looking variables (the default)."""
    MINIMAL = "minimal"
    """Only an allowlist of harmless variables (PATH, locale, terminal, toolchain homes)."""


#: Variable names that look like they hold a secret. Matched case-insensitively.
SECRET_NAME = re.compile(
    r"(TOKEN|SECRET|PASSW(OR)?D|CREDENTIAL|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|AUTH|COOKIE"
    r"|SESSION_?KEY|SIGNING_?KEY|_KEY$|^AWS_|^AZURE_|^GCP_|^GOOGLE_APPLICATION|^DOCKER_AUTH"
    r"|^NPM_CONFIG__AUTH|^PGPASS|^SSH_AUTH_SOCK$|^GPG_)",
    re.IGNORECASE,
)

#: What the minimal policy keeps. Toolchain homes are harmless and needed to find compilers.
MINIMAL_ALLOWLIST: frozenset[str] = frozenset(
    {
        "PATH",
        "LANG",
        "LANGUAGE",
        "TERM",
        "TZ",
        "USER",
        "LOGNAME",
        "SHELL",
        "TMPDIR",
        "HOME",
        "PYENV_ROOT",
        "PYENV_VERSION",
        "CARGO_HOME",
        "RUSTUP_HOME",
        "RUSTUP_TOOLCHAIN",
        "GOROOT",
        "GOPATH",
        "GOCACHE",
        "GOMODCACHE",
        "GOFLAGS",
        "GOTOOLCHAIN",
        "GOPROXY",
        "NVM_DIR",
        "NODE_PATH",
        "VIRTUAL_ENV",
        "JAVA_HOME",
        "SOURCE_DATE_EPOCH",
        "CI",
    }
)
_MINIMAL_PREFIXES = ("LC_",)

#: Tool homes that default to a path under $HOME; when HOME is pinned elsewhere they are
#: set to where the tools really live, so that pinning HOME does not hide the toolchain.
_HOME_RELATIVE_TOOL_DIRS = {
    "PYENV_ROOT": ".pyenv",
    "CARGO_HOME": ".cargo",
    "RUSTUP_HOME": ".rustup",
}


def looks_secret(name: str) -> bool:
    return SECRET_NAME.search(name) is not None


def build_env(
    policy: EnvPolicy = EnvPolicy.SCRUB,
    overlay: Mapping[str, str] | None = None,
    *,
    home: str | None = None,
    base: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment for a child: `base` (default: this process's) filtered by
    `policy`, with HOME/USERPROFILE pinned to `home` if given, then `overlay` on top.

    The overlay is applied last and unfiltered: what a caller passes explicitly is
    what it meant to pass.
    """
    source = dict(os.environ if base is None else base)
    match policy:
        case EnvPolicy.INHERIT:
            env = source
        case EnvPolicy.SCRUB:
            env = {k: v for k, v in source.items() if not looks_secret(k)}
        case EnvPolicy.MINIMAL:
            env = {
                k: v
                for k, v in source.items()
                if k in MINIMAL_ALLOWLIST or k.startswith(_MINIMAL_PREFIXES)
            }
        case _:
            raise ValueError(f"unknown environment policy: {policy!r}")
    if home is not None:
        real_home = source.get("HOME") or os.path.expanduser("~")
        for var, rel in _HOME_RELATIVE_TOOL_DIRS.items():
            candidate = os.path.join(real_home, rel)
            if var not in env and os.path.isdir(candidate):
                env[var] = candidate
        env["HOME"] = home
        env["USERPROFILE"] = home
    env.setdefault("PATH", os.defpath)
    if overlay:
        env.update(overlay)
    return env
