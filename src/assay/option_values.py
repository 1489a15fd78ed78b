"""What a command's words give an option: `--config x` and `--config=x` alike (pure)."""

from __future__ import annotations

from collections.abc import Container, Sequence


def option_values(
    words: Sequence[str], options: Container[str], *, stop_at_double_dash: bool = False
) -> list[str]:
    """The values `words` gives any of `options`, in order, each inline (`--config=x`) or
    the next word (`--config x`); an option that ends the words gives none. With
    `stop_at_double_dash`, words after `--` are not read: they are the program's, not the
    tool's (`cargo test -- --target x` passes `--target` to the test binary)."""
    values: list[str] = []
    for at, word in enumerate(words):
        if stop_at_double_dash and word == "--":
            break
        option, eq, inline = word.partition("=")
        if option not in options:
            continue
        if eq:
            values.append(inline)
        elif at + 1 < len(words):
            values.append(words[at + 1])
    return values


def last_value(
    words: Sequence[str], options: Container[str], *, stop_at_double_dash: bool = False
) -> str | None:
    """The value the last of `options` given in `words` has (the one a tool keeps), or None."""
    values = option_values(words, options, stop_at_double_dash=stop_at_double_dash)
    return values[-1] if values else None


def first_value(
    words: Sequence[str], options: Container[str], *, stop_at_double_dash: bool = False
) -> str | None:
    """The value the first of `options` given in `words` has, or None."""
    values = option_values(words, options, stop_at_double_dash=stop_at_double_dash)
    return values[0] if values else None
