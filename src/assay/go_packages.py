"""The packages a `go` command names, and whether one command's reach covers another's (pure).

A `go test -v ./ast` tests other code than `go test -v .`: the two are runs of one build,
yet neither stands for the other."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

#: `go test` and build flags that take the next argument as their value (unless `-f=v`).
GO_VALUED = frozenset(
    {
        "-p", "-covermode", "-coverpkg", "-asmflags", "-buildmode", "-buildvcs", "-compiler",
        "-gccgoflags", "-gcflags", "-installsuffix", "-ldflags", "-mod", "-modfile",
        "-overlay", "-pgo", "-pkgdir", "-tags", "-toolexec", "-exec", "-o", "-vet", "-bench",
        "-benchtime", "-count", "-cpu", "-fuzz", "-fuzztime", "-fuzzminimizetime", "-list",
        "-parallel", "-run", "-skip", "-shuffle", "-timeout", "-blockprofile",
        "-blockprofilerate", "-coverprofile", "-cpuprofile", "-memprofile",
        "-memprofilerate", "-mutexprofile", "-mutexprofilefraction", "-outputdir", "-trace",
    }
)  # fmt: skip

#: The pattern that names every package below the directory a command runs in.
_ALL = "./..."


def go_package_patterns(argv: Sequence[str]) -> tuple[str, ...]:
    """The package patterns a `go test`, `go build` or `go vet` command names, directories
    normalized (`./ast/` -> `./ast`, `./x/../y` as written); `.`, the directory it runs in,
    when it names none."""
    at = next((i for i, word in enumerate(argv) if word.rsplit("/", 1)[-1] == "go"), None)
    if at is None or at + 1 >= len(argv):
        return (".",)
    patterns: list[str] = []
    words = list(argv[at + 2 :])
    while words:
        word = words.pop(0)
        if word in ("-args", "--"):
            break  # the test binary's own arguments
        if word.startswith("-"):
            name = "-" + word.lstrip("-").partition("=")[0]
            if name in GO_VALUED and "=" not in word and words:
                words.pop(0)
            continue
        patterns.append(_normalized(word))
    return tuple(patterns) or (".",)


def _normalized(pattern: str) -> str:
    if not _is_directory(pattern):
        return pattern  # an import path: compared as it is spelt
    parts = [part for part in pattern.split("/") if part not in (".", "")]
    return "/".join([".", *parts])


def _is_directory(pattern: str) -> bool:
    return pattern == "." or pattern.startswith("./")


def covers(ours: Iterable[str], theirs: Iterable[str]) -> bool:
    """Whether the packages `ours` names include every one `theirs` names."""
    mine = list(ours)
    return all(any(_covers(pattern, other) for pattern in mine) for other in theirs)


def _covers(pattern: str, other: str) -> bool:
    if pattern == other:
        return True
    base, slash, tail = pattern.rpartition("/")
    if not (slash and tail == "..." and "..." not in base):
        return False
    if base == ".":
        return _is_directory(other)
    return other == base or other.startswith(base + "/")


def patterns_name(patterns: Sequence[str]) -> str:
    """A check name's suffix for the packages `patterns` names (`ast`, `parser-all`)."""
    words = []
    for pattern in patterns:
        short = "root" if pattern == "." else pattern.removeprefix("./")
        words.append(short.replace("...", "all").replace("/", "-"))
    return "-".join(words)
