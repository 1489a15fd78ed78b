"""Which environment variables a child process sees: a policy plus the caller's overlay."""

from __future__ import annotations

import enum
import os
import re
from collections.abc import Mapping
from types import MappingProxyType

from assay.option_values import option_values


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
        # The machine's trust anchors (behind a TLS-inspecting proxy, an install reaches its
        # registry only through them): paths to certificates, no secret.
        "NODE_EXTRA_CA_CERTS",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        # Not CI: checks get assay's (`CHECK_ENV`) and install steps none, whatever the caller's.
    }
)
_MINIMAL_PREFIXES = ("LC_",)

#: What every check sees, laid under its own variables: checks run as the project's CI runs
#: them, and some suites expect it (picocolors' tests expect colours, which it turns on under
#: CI). Set whatever the caller's shell says, `CI=false` included: the verdict must not depend
#: on where assay was started from, and the verdict cache does not key on it. A `CI` among a
#: check's own variables (the project's configuration stating it) still wins. Install steps
#: do not get it: under CI pnpm and yarn refuse to write a lockfile, and a fresh clone has
#: none (bubblewrap's minimal environment drops a caller's `CI` too; the local and none
#: backends hand install steps the caller's environment, as they do everything).
CHECK_ENV: Mapping[str, str] = MappingProxyType({"CI": "true"})

#: Tool homes that default to a path under $HOME; when HOME is pinned elsewhere they are
#: set to where the tools really live, so that pinning HOME does not hide the toolchain.
_HOME_RELATIVE_TOOL_DIRS = {
    "PYENV_ROOT": ".pyenv",
    "CARGO_HOME": ".cargo",
    "RUSTUP_HOME": ".rustup",
}


#: The backends whose checks see only `MINIMAL_ALLOWLIST` of the host's variables; the
#: others hand on the whole scrubbed environment.
_MINIMAL_BACKENDS = frozenset({"auto", "bwrap"})
#: What the scrubbed environment hands on that says where the caller's shell is, or where
#: assay keeps its state and finds its server, and nothing about how a check runs: a
#: verdict is the same whichever directory it was asked for from.
_CALLERS_STATE = frozenset(
    {
        "PWD",
        "OLDPWD",
        "SHLVL",
        "_",
        "ASSAY_CACHE_DIR",
        "ASSAY_WORKSPACE_DIR",
        "ASSAY_SERVER",
        "ASSAY_NO_SERVER",
        "ASSAY_NO_PROBE_CACHE",
        "ASSAY_DEBUG",
    }
)


def inherited_by_checks(sandbox: str) -> dict[str, str]:
    """The host's variables that the checks of a `sandbox` backend (as `--sandbox` names
    it) see, HOME aside (each check's is its own): what a verdict depends on beyond the
    tree, the plan and the tools, so the verdict cache keys on it (a test of local time
    passed under one TZ and fails under another)."""
    policy = EnvPolicy.MINIMAL if sandbox in _MINIMAL_BACKENDS else EnvPolicy.SCRUB
    env = build_env(policy, home="")
    for unkeyed in ("HOME", "USERPROFILE", *_CALLERS_STATE):
        env.pop(unkeyed, None)
    return env


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


# --------------------------------------------------------------------------- untrusted overlays

#: Variables a repository may not set for its checks: they make a loader, an interpreter or
#: a shell run code of the repository's choosing before the check's own command (and, on the
#: host side of a sandbox, outside it), or they steer assay and git themselves.
REFUSED_NAMES: frozenset[str] = frozenset(
    {
        "BASH_ENV",  # sourced by every non-interactive bash
        "ENV",  # sourced by sh when interactive, by some shells always
        "PS4",  # expanded (with command substitution) under `set -x`
        "PROMPT_COMMAND",
        "SHELLOPTS",
        "BASHOPTS",
        "IFS",
        "PYTHONSTARTUP",
        "PYTHONHOME",
        "PYTHONINSPECT",
        "PERL5OPT",
        "PERL5LIB",
        "PERLLIB",
        "RUBYOPT",
        "RUBYLIB",
        "JAVA_TOOL_OPTIONS",  # -javaagent: loads any jar into every JVM
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
        "GCONV_PATH",  # glibc loads iconv modules from here
        "GETCONF_DIR",
        "HOSTALIASES",
        "LOCPATH",
        "NLSPATH",
        "RESOLV_HOST_CONF",
        "HOME",  # pinned by the sandbox: a repository may not point it back at the real one
        "TMPDIR",
    }
)
#: Prefixes of refused names: the dynamic loader's, git's and assay's own controls.
REFUSED_PREFIXES: tuple[str, ...] = ("LD_", "DYLD_", "GIT_", "ASSAY_")
#: NODE_OPTIONS flags that load a module before the program: allowed only for paths in the tree.
_NODE_PRELOAD_FLAGS = ("--require", "-r", "--import", "--loader", "--experimental-loader")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def screen_overlay(
    overlay: Mapping[str, str], root: str | os.PathLike[str]
) -> tuple[dict[str, str], dict[str, str]]:
    """Split variables a repository asked for into those kept and those refused (with why).

    `root` is the repository: a preload of a file inside it runs in the sandbox like any of
    its code; one outside it (or a loader variable at all) is refused."""
    kept: dict[str, str] = {}
    refused: dict[str, str] = {}
    for name, value in overlay.items():
        why = _refusal(name, value, os.path.abspath(root))
        if why is None:
            kept[name] = value
        else:
            refused[name] = why
    return kept, refused


def sandbox_shell_name(name: str) -> bool:
    """Whether `name` is one the sandbox's own shell uses (`assay.sandbox.launch`'s loop
    counter and the variables that carry a command's words and exports in)."""
    return name.startswith("_ASSAY_") or name == "_i"


def _refusal(name: str, value: str, root: str) -> str | None:
    if not _ENV_NAME.fullmatch(name):
        return "not a valid variable name"
    if sandbox_shell_name(name):
        return "the sandbox's own shell uses the name"
    if "\0" in value:
        return "its value holds a NUL byte, which no environment can hold"
    upper = name.upper()
    if upper in REFUSED_NAMES or upper.startswith(REFUSED_PREFIXES):
        return "it would make a loader, interpreter, shell or git run code before the check"
    if upper == "NODE_OPTIONS":
        outside = [p for p in _node_preloads(value) if not _inside(p, root)]
        if outside:
            return f"it preloads {outside[0]}, outside the repository"
    return None


def _node_preloads(value: str) -> list[str]:
    """The module paths NODE_OPTIONS preloads (`--require X`, `-r X`, `--import=X` ...)."""
    return [target.strip("'\"") for target in option_values(value.split(), _NODE_PRELOAD_FLAGS)]


def _inside(path: str, root: str) -> bool:
    """Whether a preload target stays in the tree: relative paths and bare package names do
    (they resolve against the check's directory or node_modules); `~` and absolute ones must."""
    path = path.removeprefix("file://")
    if path.startswith("~"):
        return False
    if not os.path.isabs(path):
        return ".." not in path.split("/")
    real = os.path.normpath(path)
    return real == root or real.startswith(root.rstrip("/") + "/")
