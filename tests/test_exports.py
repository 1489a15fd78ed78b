"""The package's public surface: every advertised name exists and is the real object."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import assay


@pytest.mark.parametrize("name", sorted(assay._EXPORTS))
def test_every_export_resolves_to_its_defining_module(name: str) -> None:
    module = importlib.import_module(assay._EXPORTS[name])
    assert getattr(assay, name) is getattr(module, name)


def test_all_lists_exactly_the_exports_and_the_version() -> None:
    assert sorted(assay.__all__) == sorted(["__version__", *assay._EXPORTS])
    assert assay.__version__ == importlib.import_module("assay._version").__version__


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError):
        assay.no_such_name  # noqa: B018


def test_importing_assay_loads_nothing_heavy() -> None:
    """`import assay` (and so the CLI's start) must not import the whole library."""
    code = "import assay, sys; print(sorted(m for m in sys.modules if m.startswith('assay')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['assay', 'assay._version']"
