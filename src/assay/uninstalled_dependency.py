"""A node check that cannot load a package its project declares: dependencies not installed.

A fresh clone has no `node_modules`. Its test script then stops at the first `require` of a
devDependency (`Error: Cannot find module 'mocha'`), which says nothing of the code: the
check could not be made (`toolchain_missing`, UNVERIFIED), and `assay verify --install`
(`npm ci`) or the user's own install mends it.

Only a package that package.json declares and `node_modules` lacks counts. A module the
project does not declare (a change that requires a new one, or misspells one) stays a
failure: no install would mend it. package.json is read as untrusted (no links, bounded).

The same holds of a script that ran the host's own release of a tool the project declares
and has not installed (`host_tool_for_declared`): the host's tsc is not the project's. The
script may reach the tool through another of its scripts (ini's `lint` is `npm run eslint`),
and the project may declare the tool through its shared configuration or a plugin of it
(`@npmcli/eslint-config`, `eslint-plugin-x`: each needs the tool beside it, as a peer), not
by name: the host's ESLint 10 then stops at ini's `.eslintrc.js` ("ESLint couldn't find an
eslint.config.* file", exit 2), and its clean tree read as FAILED. npm runs a script's
`pre` hook before it (minimist's `test` starts with `pretest`, `npm run lint`): the host's
ESLint stopped there, the tests never ran, and the run read as "exited 2 and its output
does not say why".
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
from collections.abc import Sequence

from assay.untrusted_files import read_untrusted

__all__ = ["declared_node_packages", "host_tool_for_declared", "uninstalled_node_dependency"]

#: node's words for a `require` (CommonJS) or an `import` (ESM) of a package it cannot find;
#: uvu's `-r` loader quotes the name in double quotes (`Cannot find module "esm"`).
_NOT_FOUND = re.compile(
    r"Cannot find (?:module|package) (?P<q>['\"])(?P<name>(?:@[\w.-]+/)?[\w.-]+)(?:/[^'\"]*)?(?P=q)"
)
_DECLARING = ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies")
MAX_PACKAGE_JSON_BYTES = 1024 * 1024


#: yarn 2 and later, asked to run anything before an install: with node_modules, and
#: with Plug'n'Play.
_YARN_NOT_INSTALLED = re.compile(
    r"Couldn't find the node_modules state file - running an install might help"
    r"|doesn't seem to have been installed - running an install there might help"
)


def uninstalled_node_dependency(output: str, cwd: str) -> str | None:
    """The package `output` says node could not find, when every such package is one the
    package.json at `cwd` declares and `cwd/node_modules` lacks; else None. Where yarn
    refused to run for want of an install (and none was made), "its dependencies"."""
    if _YARN_NOT_INSTALLED.search(output):
        return "its dependencies"
    names = sorted({found["name"] for found in _NOT_FOUND.finditer(output)})
    if not names:
        return None
    declared = declared_node_packages(cwd)
    if not all(
        n in declared and not os.path.lexists(os.path.join(cwd, "node_modules", n)) for n in names
    ):
        return None
    return names[0]


#: Commands a package installs under a name other than its own.
_BIN_PACKAGES = {
    "tsc": "typescript",
    "tsserver": "typescript",
    "run-p": "npm-run-all",
    "run-s": "npm-run-all",
    "biome": "@biomejs/biome",
    "ng": "@angular/cli",
}
#: What separates the commands of a script's line.
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&"})
#: Words before a command that run it: the package manager's own runners.
_RUNNERS = frozenset({"npx", "exec", "pnpx", "bunx"})


def host_tool_for_declared(argv: Sequence[str], cwd: str) -> tuple[str, str] | None:
    """(command, package) when the package script `argv` runs (`npm run X`, `npm test`,
    `yarn X`, `pnpm X`) starts a command the host has on its PATH whose package the
    package.json at `cwd` declares and `cwd/node_modules` lacks: another release than the
    project's (mitt's `tsc --noEmit` ran the host's TypeScript 7, which refuses the
    `moduleResolution` its 4.9 took); else None."""
    from assay.tools.node import script_called

    script = script_called(list(argv[1:]))
    if script is None:
        return None
    scripts = _manifest(cwd).get("scripts")
    if not isinstance(scripts, dict):
        return None
    declared = declared_node_packages(cwd)
    hooked = os.path.basename(argv[0]) in _HOOK_RUNNERS
    for command in _script_commands(scripts, script, hooked=hooked):
        if "/" in command:
            continue  # a path, no package's command: never looked up on the host
        package = _BIN_PACKAGES.get(command, command)
        declaring = _declaring(declared, package)
        if (
            declaring is not None
            and not os.path.lexists(os.path.join(cwd, "node_modules", package))
            and shutil.which(command) is not None
        ):
            return command, declaring
    return None


#: How deep `_script_commands` follows scripts that run other scripts.
_MAX_SCRIPT_DEPTH = 4
#: Package managers whose `X run NAME` (npm's `npm test` too) runs the script NAME.
_SCRIPT_RUNNERS = frozenset({"npm", "yarn", "pnpm", "bun"})
#: Package managers that run a script's `preNAME` hook before it, whatever NAME is: npm
#: (pnpm and yarn 2 and later do not by default, and which yarn runs a script is not known
#: here).
_HOOK_RUNNERS = frozenset({"npm"})


def _script_commands(
    scripts: dict[object, object], name: str, depth: int = 0, *, hooked: bool = False
) -> list[str]:
    """The commands the script `name` runs, through the scripts it runs in turn (`npm run
    eslint`, `yarn lint`), to `_MAX_SCRIPT_DEPTH`; where npm runs it (`hooked`), its
    `preNAME` hook's first, which runs before it and whose failure stops it. Its `postNAME`
    hook runs only after it passed, so it is not among a failed script's commands."""
    from assay.tools.node import script_called

    line = scripts.get(name)
    if not isinstance(line, str):
        return []
    commands: list[str] = []
    if hooked and depth < _MAX_SCRIPT_DEPTH:  # a hook has no hook of its own
        commands.extend(_script_commands(scripts, f"pre{name}", depth + 1))
    for words in _parts(line):
        called = script_called(words[1:]) if words[0] in _SCRIPT_RUNNERS else None
        if called is not None and called != name and depth < _MAX_SCRIPT_DEPTH:
            runs_hooks = words[0] in _HOOK_RUNNERS
            commands.extend(_script_commands(scripts, called, depth + 1, hooked=runs_hooks))
        else:
            commands.append(words[0])
    return commands


def _declaring(declared: set[str], package: str) -> str | None:
    """The package of `declared` that brings `package`: itself, else a shared configuration
    or plugin of it (`@npmcli/eslint-config`, `eslint-config-x`, `eslint-plugin-x`), which
    needs it installed beside it; None when the project declares neither."""
    if package in declared:
        return package
    for name in sorted(declared):
        last = name.rpartition("/")[2]
        if last in (f"{package}-config", f"{package}-plugin") or last.startswith(
            (f"{package}-config-", f"{package}-plugin-")
        ):
            return name
    return None


def _parts(line: str) -> list[list[str]]:
    """The words of each part of a script's line, from its command on (after any
    `VAR=value` and runner)."""
    try:
        words = shlex.split(line, comments=False)
    except ValueError:
        return []
    parts: list[list[str]] = []
    at_start = True
    for word in words:
        if word in _SEPARATORS:
            at_start = True
        elif at_start and not ("=" in word and not word.startswith("=")) and word not in _RUNNERS:
            parts.append([word])
            at_start = False
        elif not at_start:
            parts[-1].append(word)
    return parts


def _manifest(cwd: str | os.PathLike[str]) -> dict[str, object]:
    data = read_untrusted(cwd, "package.json", limit=MAX_PACKAGE_JSON_BYTES)
    if not isinstance(data, bytes):
        return {}
    try:
        manifest = json.loads(data)
    except (ValueError, RecursionError):
        return {}
    return manifest if isinstance(manifest, dict) else {}


def declared_node_packages(cwd: str | os.PathLike[str]) -> set[str]:
    """The packages the package.json at `cwd` declares, in any of its dependency tables;
    none when it is absent, too large or not JSON."""
    manifest = _manifest(cwd)
    tables = [table for field in _DECLARING if isinstance(table := manifest.get(field), dict)]
    return {name for table in tables for name in table if isinstance(name, str)}
