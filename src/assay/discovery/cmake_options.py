"""The project's own CMake options its CI turns on when it configures: given to assay's
configure too.

cJSON's CI configures with `-DENABLE_CJSON_UTILS=On`, an `option()` its CMakeLists.txt
declares off: configured without it, `cJSON_Utils.c` and its three test programs were never
built, and a syntax error there was VERIFIED. Only options the root CMakeLists.txt declares
with `option()` are carried over, never CMake's own variables (`CMAKE_C_COMPILER`, a
toolchain file name this CI machine, not the project's code), nor options that instrument
the build (sanitizers, valgrind, coverage, fuzzing: an AddressSanitizer build cannot run
under the sandbox's address-space limit, and none compiles more code). Where CI's
jobs give an option different values, one that turns it on wins: the build that compiles
the most code. So an option declared on that one CI configure turns off while another
leaves it on is left on: zlib's standards job configures `-DZLIB_BUILD_EXAMPLES=OFF`, its
main job the default, and with it off ctest found no test at all. Read as text, never run.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from pathlib import Path

__all__ = ["ci_options"]

#: `option(NAME "help" OFF)`, any case, any indent.
_OPTION = re.compile(r"^\s*option\s*\(\s*(\w+)", re.IGNORECASE | re.MULTILINE)
#: The same with its default, where the help is one quoted string.
_OPTION_DEFAULT = re.compile(
    r'^\s*option\s*\(\s*(\w+)\s+"[^"\n]*"\s+(\w+)\s*\)', re.IGNORECASE | re.MULTILINE
)
#: A line that runs cmake with a definition (`cmake .. -DX=On`, `cmake -S . -B b -D X=ON`).
_CONFIGURE = re.compile(r"(?<![\w-])cmake\s[^\n]*-D", re.MULTILINE)
_ON = frozenset({"on", "1", "true", "yes", "y"})
#: Options named for instrumenting the build rather than for what it compiles.
_INSTRUMENTS = re.compile(
    r"SANITI[SZ]|[AUTM]SAN\b|VALGRIND|COVERAGE|GCOV|FUZZ|SAFE_STACK|PROFIL", re.IGNORECASE
)


def ci_options(root: Path, cmakelists: str) -> tuple[str, ...]:
    """`-DNAME=VALUE` for each option `cmakelists` declares that CI's cmake configures with,
    in the order CI gives them."""
    from assay.tools.python_requirements import ci_texts

    declared = {name.upper(): name for name in _OPTION.findall(cmakelists)}
    if not declared:
        return ()
    on_by_default = {
        name.upper() for name, default in _OPTION_DEFAULT.findall(cmakelists) if _on(default)
    }
    chosen: dict[str, str] = {}
    left_at_default: set[str] = set()
    for text in ci_texts(root):
        for definitions in _configures(text.decode("utf-8", "replace")):
            left_at_default |= declared.keys() - {name.upper() for name, _ in definitions}
            for name, value in definitions:
                if name.upper() not in declared or _INSTRUMENTS.search(name):
                    continue
                if name not in chosen or (_on(value) and not _on(chosen[name])):
                    chosen[name] = value
    return tuple(
        f"-D{name}={value}"
        for name, value in chosen.items()
        if _on(value) or name.upper() not in on_by_default & left_at_default
    )


def _on(value: str) -> bool:
    return value.lower() in _ON


def _configures(text: str) -> Iterable[list[tuple[str, str]]]:
    """For each cmake command in `text` that defines something, each `-DNAME=VALUE` (or
    `-D NAME=VALUE`, `-DNAME:BOOL=VALUE`) it gives; values with shell expansions in them left
    out."""
    for match in _CONFIGURE.finditer(text):
        end = text.find("\n", match.start())
        line = text[match.start() : end if end != -1 else len(text)]
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            continue
        yield list(_definitions(words))


def _definitions(words: list[str]) -> Iterable[tuple[str, str]]:
    for at, word in enumerate(words):
        if word == "-D" and at + 1 < len(words):
            word = "-D" + words[at + 1]
        if not word.startswith("-D") or "=" not in word:
            continue
        name, _, value = word[2:].partition("=")
        name = name.partition(":")[0]
        if re.fullmatch(r"\w+", name) and value and not set(value) & set("$`"):
            yield name, value
