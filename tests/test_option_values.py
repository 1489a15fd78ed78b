"""A command's options read from its words (`assay.option_values`)."""

from __future__ import annotations

from assay.option_values import first_value, last_value, option_values


def test_an_option_gives_its_value_inline_or_in_the_next_word() -> None:
    words = ["mypy", "--config-file", "a.ini", "--config-file=b.ini", "src"]
    assert option_values(words, {"--config-file"}) == ["a.ini", "b.ini"]
    assert (first_value(words, {"--config-file"}), last_value(words, {"--config-file"})) == (
        "a.ini",
        "b.ini",
    )


def test_a_value_keeps_its_own_equals_signs_and_any_spelling_of_the_option_counts() -> None:
    words = ["ruff", "--config", "lint.ignore=['E501']", "-c=x=y"]
    assert option_values(words, {"--config", "-c"}) == ["lint.ignore=['E501']", "x=y"]


def test_an_option_ending_the_words_gives_nothing_and_a_longer_option_is_another() -> None:
    assert option_values(["tox", "--envs", "-e"], {"-e"}) == []
    assert option_values(["cargo", "--targets", "x"], {"--target"}) == []
    assert first_value(["cargo", "test"], {"--target"}) is None


def test_words_after_a_double_dash_are_the_programs_where_asked() -> None:
    words = ["cargo", "test", "--", "--target", "x"]
    assert option_values(words, {"--target"}, stop_at_double_dash=True) == []
    assert option_values(words, {"--target"}) == ["x"]
