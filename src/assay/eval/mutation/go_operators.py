"""The mutation operators on Go, at token level: a small lexer (comments, strings, runes
and numbers are whole tokens, so nothing inside them is mutated) and the same operators
as for Python, each an edit at exact byte offsets. A mutant that does not compile is
found by running the tests and dropped there."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from assay.eval.mutation.model import Mutation

_TOKEN = re.compile(
    rb"(?P<space>[ \t\r]+)|(?P<newline>\n)|(?P<comment>//[^\n]*|/\*.*?\*/)"
    rb"|(?P<string>\"(?:\\.|[^\"\\\n])*\"|`[^`]*`|'(?:\\.|[^'\\\n])+')"
    rb"|(?P<number>0[xXbBoO][0-9a-fA-F_]+|[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][+-]?[0-9]+)?)"
    rb"|(?P<ident>[A-Za-z_][A-Za-z0-9_]*)"
    rb"|(?P<op><<=|>>=|&\^=|\.\.\.|&&|\|\||<-|\+\+|--|==|!=|<=|>=|:=|[-+*/%&|^<>]=|<<|>>|&\^"
    rb"|[-+*/%&|^<>=!(){}\[\],;.:~])"
    rb"|(?P<other>.)",
    re.DOTALL,
)
_FLIPS = {b"<": b">", b">": b"<", b"<=": b">=", b">=": b"<=", b"==": b"!=", b"!=": b"=="}
_ZERO = {
    **{t: b"0" for t in (b"int", b"int8", b"int16", b"int32", b"int64", b"uint", b"uint8")},
    **{t: b"0" for t in (b"uint16", b"uint32", b"uint64", b"float32", b"float64", b"byte")},
    b"rune": b"0",
    b"string": b'""',
}
_ASSIGN = {b"=", b"+=", b"-=", b"*=", b"/=", b"%=", b"++", b"--"}


@dataclass(frozen=True, slots=True)
class Token:
    kind: str
    text: bytes
    start: int
    end: int
    line: int


def tokens(text: bytes) -> list[Token]:
    found = []
    line = 1
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup or "other"
        if kind not in ("space", "comment"):
            found.append(Token(kind, match.group(), match.start(), match.end(), line))
        line += match.group().count(b"\n")
    return found


def go_mutations(text: bytes, path: str) -> list[Mutation]:
    toks = tokens(text)
    lines = _lines(toks)
    found: list[Mutation] = []
    found += _comparison_flips(toks, text, path)
    found += _off_by_ones(toks, text, path)
    for line in lines:
        found += _line_sites(line, toks, text, path)
    return found


def _edit(
    operator: str, path: str, text: bytes, start: int, end: int, new: bytes, line: int
) -> Mutation:
    return Mutation(operator, path, line, start, end, new, text[start:end])


def _lines(toks: list[Token]) -> list[list[Token]]:
    lines: list[list[Token]] = [[]]
    for tok in toks:
        if tok.kind == "newline":
            lines.append([])
        else:
            lines[-1].append(tok)
    return [line for line in lines if line]


def _in_import_or_const(toks: list[Token]) -> set[int]:
    """Indexes of tokens inside `import (...)` / `const` declarations (not mutated)."""
    skipped: set[int] = set()
    for index, tok in enumerate(toks):
        if tok.kind == "ident" and tok.text in (b"import", b"package"):
            depth = 0
            for inner in range(index, len(toks)):
                skipped.add(inner)
                if toks[inner].text == b"(":
                    depth += 1
                elif toks[inner].text == b")":
                    depth -= 1
                if depth == 0 and toks[inner].kind == "newline" and inner > index + 1:
                    break
    return skipped


def _comparison_flips(toks: list[Token], text: bytes, path: str) -> Iterator[Mutation]:
    for tok in toks:
        if tok.kind == "op" and tok.text in _FLIPS:
            yield _edit(
                "comparison_flip", path, text, tok.start, tok.end, _FLIPS[tok.text], tok.line
            )


def _off_by_ones(toks: list[Token], text: bytes, path: str) -> Iterator[Mutation]:
    skipped = _in_import_or_const(toks)
    for index, tok in enumerate(toks):
        if index in skipped or tok.kind != "number" or not tok.text.isdigit():
            continue
        new = str(int(tok.text) + 1).encode()
        yield _edit("off_by_one", path, text, tok.start, tok.end, new, tok.line)


def _line_sites(line: list[Token], toks: list[Token], text: bytes, path: str) -> Iterator[Mutation]:
    first, last = line[0], line[-1]
    words = [t.text for t in line]
    if first.text == b"return" and len(line) > 1 and _flat(line[1:]):
        zero = _result_zero(toks, first)
        if zero is not None and text[line[1].start : last.end] != zero:
            yield _edit("wrong_return", path, text, line[1].start, last.end, zero, first.line)
    elif first.text == b"if" and last.text == b"{" and b";" not in words and len(line) > 2:
        start, end = line[1].start, line[-2].end
        condition = text[start:end]
        yield _edit(
            "negated_condition", path, text, start, end, b"!(" + condition + b")", first.line
        )
    elif (
        last.text not in (b"{", b"(", b",")
        and first.kind == "ident"
        and first.text
        not in (
            b"return",
            b"if",
            b"for",
            b"switch",
            b"case",
            b"go",
            b"defer",
            b"var",
            b"const",
            b"type",
            b"func",
            b"package",
            b"import",
            b"else",
            b"default",
            b"break",
            b"continue",
        )
    ):
        statement = _is_simple_statement(line)
        if statement:
            yield _edit("dropped_statement", path, text, first.start, last.end, b"", first.line)
    yield from _swaps(line, text, path)


def _flat(line: list[Token]) -> bool:
    """One expression: no top-level comma (a single result), brackets balanced."""
    depth = 0
    for tok in line:
        if tok.text in (b"(", b"[", b"{"):
            depth += 1
        elif tok.text in (b")", b"]", b"}"):
            depth -= 1
        elif tok.text == b"," and depth == 0:
            return False
        if depth < 0:
            return False
    return depth == 0


def _is_simple_statement(line: list[Token]) -> bool:
    """An assignment (not a declaration) or a call statement, whole on its line."""
    if any(t.text == b":=" for t in line):
        return False
    if any(t.kind == "op" and t.text in _ASSIGN for t in line):
        return _flat(line)
    return len(line) >= 3 and line[-1].text == b")" and line[1].text in (b"(", b".") and _flat(line)


def _result_zero(toks: list[Token], at: Token) -> bytes | None:
    """The zero value of the single result of the function `at` is in, when it is a basic
    type whose zero is a constant; a bool result gets `false`."""
    index = toks.index(at)
    for back in range(index, -1, -1):
        if toks[back].text == b"func":
            break
    else:
        return None
    depth = 0
    closed_params = 0
    result: list[bytes] = []
    for tok in toks[back + 1 :]:
        if tok.text == b"(":
            depth += 1
        elif tok.text == b")":
            depth -= 1
            if depth == 0:
                closed_params += 1
                continue
        elif tok.text == b"{" and depth == 0:
            break
        if depth == 0 and closed_params >= 1 and tok.kind != "newline":
            result.append(tok.text)
    if len(result) != 1:
        return None
    if result[0] == b"bool":
        return b"false"
    return _ZERO.get(result[0])


def _swaps(line: list[Token], text: bytes, path: str) -> Iterator[Mutation]:
    """The first two arguments of a call, each a single token, swapped."""
    for index in range(len(line) - 5):
        name, opening, a, comma, b, after = line[index : index + 6]
        if (
            name.kind == "ident"
            and opening.text == b"("
            and comma.text == b","
            and after.text in (b",", b")")
            and a.kind in ("ident", "number", "string")
            and b.kind in ("ident", "number", "string")
            and a.text != b.text
            and name.text not in (b"func",)
        ):
            swapped = b.text + text[a.end : b.start] + a.text
            yield _edit("swapped_arguments", path, text, a.start, b.end, swapped, a.line)
