"""A collection failure's NameError for a name a test module imports only where an optional
module imports names that module; any other NameError is left as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.optional_import import with_optional_import

MESSAGE = "collection failure: NameError: name 'settings' is not defined"

GUARDED = """\
try:
    import hypothesmith
    from hypothesis import given, settings
except ImportError:
    hypothesmith = None

@settings(max_examples=1)
def test_a(): pass
"""


def _note(tmp_path: Path, source: str, message: str = MESSAGE) -> str:
    (tmp_path / "test_m.py").write_text(source)
    return with_optional_import(message, str(tmp_path), "test_m.py")


def test_a_name_only_a_guarded_import_binds_names_its_modules(tmp_path: Path) -> None:
    assert _note(tmp_path, GUARDED) == (
        f"{MESSAGE} (`settings` comes from an import of hypothesmith, hypothesis in a `try` "
        "that catches ImportError: one of them could not be imported, most likely not "
        "installed)"
    )


@pytest.mark.parametrize(
    "source",
    [
        # The handler binds the name too: the NameError is not the import's.
        GUARDED.replace("hypothesmith = None", "settings = None"),
        # Bound elsewhere at the top level as well.
        GUARDED + "settings = 1\n",
        # A handler for something else: no optional import.
        GUARDED.replace("except ImportError", "except KeyError"),
        # Not imported in a try at all.
        "def test_a():\n    settings\n",
        "def broken(:\n",
        # Deeper than the parser goes (a file of the code's: it may be written to stop it).
        "x = " + "-" * 100_000 + "1\n",
        "x = x" + ".a" * 200_000 + "\n",
    ],
)
def test_any_other_shape_leaves_the_message(tmp_path: Path, source: str) -> None:
    assert _note(tmp_path, source) == MESSAGE


def test_other_messages_and_missing_files_are_left(tmp_path: Path) -> None:
    other = "collection failure: SyntaxError: invalid syntax"
    assert _note(tmp_path, GUARDED, other) == other
    assert with_optional_import(MESSAGE, str(tmp_path), "absent.py") == MESSAGE
    assert with_optional_import(MESSAGE, None, "test_m.py") == MESSAGE
